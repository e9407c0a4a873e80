# mpe_add_tool(<name> ALIAS <a> [NO_INSTALL] [SOLO <header> <hooks type>] SOURCES ...): a tool library,
# lib<name>.so, carrying its own copy of the generated core, known inside the build and in the
# installed package as mpe::<a> (the one name to link it by). Whichever tool library the loader
# finds first provides the MPI_ symbols; the others register their hooks with it through the
# exported mpe_core_register_tool.
# SOLO: the header (beside the sources) that defines the tool's hooks inline, and their type
# (mpe::core::Solo in mpe/core.h). The library's wrappers of the per-message routines then call
# them directly while this tool is the only one registered.
function(mpe_add_tool name)
  cmake_parse_arguments(ARG "NO_INSTALL" "ALIAS" "SOURCES;SOLO" ${ARGN})
  if(NOT ARG_ALIAS)
    message(FATAL_ERROR "mpe_add_tool(${name}): ALIAS is required (the tool is linked as mpe::<alias>)")
  endif()
  add_library(${name} SHARED ${ARG_SOURCES} ${MPE_SOLO_WRAPPERS} $<TARGET_OBJECTS:mpe_core>)
  # As the core's wrappers: no exceptions on the per-call path, each wrapper on its own cache line.
  set_source_files_properties(${MPE_SOLO_WRAPPERS} TARGET_DIRECTORY ${name} PROPERTIES
                              COMPILE_OPTIONS "-fno-exceptions;-falign-functions=64;-Wno-deprecated-declarations")
  if(ARG_SOLO)
    list(GET ARG_SOLO 0 _header)
    list(GET ARG_SOLO 1 _hooks)
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_compile_definitions(${name} PRIVATE "MPE_SOLO_HEADER=\"${_header}\"" MPE_SOLO_HOOKS=${_hooks})
  endif()
  if(MPE_POISON_CALLS)
    target_compile_definitions(${name} PRIVATE MPE_POISON_CALLS)
  endif()
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
