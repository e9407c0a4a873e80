# MPE_SANITIZE=ON: builds our C++ libraries (the tools and all they carry) with AddressSanitizer and
# UndefinedBehaviorSanitizer, and poisons every mpe::Call, for the memory-checked runs
# (tests/memcheck). The MPI programs (C and Fortran) stay uninstrumented, as a user's would be:
# the tests preload the ASan runtime ahead of the tool libraries.
option(MPE_SANITIZE "Build the C++ code with ASan and UBSan and poison every mpe::Call (tests/memcheck)" OFF)
if(MPE_SANITIZE)
  # No recovery: the first undefined behaviour ends the run, so a test cannot miss it in the noise.
  # -O1 (after the build type's -O2, so it wins): what ASan's authors advise, and it cuts the compile
  # of the generated wrappers by about 40 %, the bulk of this build's time in scripts/test.
  set(_mpe_sanitize -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1)
  # Libraries only: the tools and what they carry (core, base, merge, interop). The programs' own
  # sources (`mpe`'s CLI code) are not what the runs check, and instrumented CLI11 is slow to build.
  add_compile_options("$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>>>:${_mpe_sanitize}>")
  # What links as C++ (the tool libraries, `mpe` with the libraries it carries) needs the runtimes;
  # the C and Fortran programs load them through LD_PRELOAD, ahead of everything.
  add_link_options("$<$<LINK_LANGUAGE:CXX>:-fsanitize=address,undefined>")
  # A tool reading a Call field its role bit does not promise then gets a non-canonical pointer.
  set(MPE_POISON_CALLS ON)  # a normal variable: core's option() yields to it (CMP0077)
endif()
