# How the suite keeps its compile time down (issue 39): less debug information and unity builds for
# the code that needs no MPI. Included by the top CMakeLists.txt and by the reader's fuzz project
# (tests/merge/fuzz), which builds merge/ on its own.

# The code that needs no MPI (the format, the analyses, OTF2, the live stream, the command line,
# the viewer, and their unit tests) carries line tables only: -g1 compiles its template-heavy
# files (nlohmann-json, CLI11, Qt) about 30% faster than -g (log_reader.cpp 7.3 s to 5.2 s,
# tracebuilder.cpp 9.2 s to 6.7 s, umq.cpp 8.1 s to 5.7 s) and still gives backtraces with file
# and line. The tool libraries, the samples and the MPI tests keep full -g: call sites are read
# back from their DWARF (inlined frames included). Each such directory adds these options.
set(MPE_LINE_TABLES_ONLY $<$<CONFIG:RelWithDebInfo>:-g1>)

# The MPI-independent libraries, the command line and the viewer compile in batches of 8 files (a
# unity build): their files share heavy headers (nlohmann-json, CLI11, Qt), whose templates are
# then instantiated and compiled once per batch instead of once per file. Measured on 2 cores:
# `mpe` 102 s to 43 s, upshot_lib 64 s to 31 s. Sources with settings of their own (cli/main.cpp)
# compile alone, as CMake does for them. -DMPE_UNITY_BUILD=OFF compiles every file by itself.
option(MPE_UNITY_BUILD "Compile the MPI-independent code in batches of 8 files" ON)
function(mpe_unity_build target)
  if(MPE_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    # GCC takes a .cpp included into a batch for a header, and warns that a class there has a
    # member of an anonymous-namespace type (-Wsubobject-linkage): true of a header, not of these.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()
