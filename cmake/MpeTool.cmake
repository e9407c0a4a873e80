# mpe_add_tool(<name> ALIAS <a> [NO_INSTALL] SOURCES ...): a tool library, lib<name>.so, carrying its own copy of
# the generated core, known inside the build and in the installed package as mpe::<a> (the one name
# to link it by). Whichever tool library the loader finds first provides the MPI_ symbols; the
# others register their hooks with it through the exported mpe_core_register_tool.
function(mpe_add_tool name)
  cmake_parse_arguments(ARG "NO_INSTALL" "ALIAS" "SOURCES" ${ARGN})
  if(NOT ARG_ALIAS)
    message(FATAL_ERROR "mpe_add_tool(${name}): ALIAS is required (the tool is linked as mpe::<alias>)")
  endif()
  add_library(${name} SHARED ${ARG_SOURCES} $<TARGET_OBJECTS:mpe_core>)
  target_link_libraries(${name} PUBLIC MPI::MPI_C PRIVATE mpe_core_interface ${MPE_MPI_FORTRAN_LIBRARY} ${MPE_MPI_F08_LIBRARY})
  set_target_properties(${name} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                                           VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                                           EXPORT_NAME ${ARG_ALIAS})
  # Without this the linker may drop a tool library the application references nothing from.
  target_link_options(${name} INTERFACE "LINKER:--no-as-needed")
  add_library(mpe::${ARG_ALIAS} ALIAS ${name})
  if(NOT ARG_NO_INSTALL)
    set_property(GLOBAL APPEND PROPERTY MPE_TOOL_TARGETS ${name})
  endif()
endfunction()
