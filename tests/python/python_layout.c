/* The offsets of CPython 3.11's structures that core/src/python_frames.cpp reads, from the installed
 * headers: one "Struct::field offset" line each, in the names of that file's comments
 * (test_python_layout.py compares them). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define FIELD(type, field) printf("%s::%s %zu\n", #type, #field, offsetof(type, field))
#define SIZE(type) printf("sizeof(%s) %zu\n", #type, sizeof(type))

int main(void) {
  FIELD(PyThreadState, cframe);
  FIELD(_PyCFrame, current_frame);
  FIELD(_PyInterpreterFrame, f_code);
  FIELD(_PyInterpreterFrame, previous);
  FIELD(_PyInterpreterFrame, prev_instr);
  FIELD(_PyInterpreterFrame, owner);
  FIELD(PyObject, ob_type);
  FIELD(PyCodeObject, co_filename);
  FIELD(PyCodeObject, co_qualname);
  FIELD(PyCodeObject, _co_firsttraceable);
  FIELD(PyCodeObject, co_code_adaptive);
  FIELD(PyASCIIObject, length);
  FIELD(PyASCIIObject, state);
  SIZE(PyASCIIObject);
  FIELD(PyCompactUnicodeObject, utf8);
  SIZE(PyCompactUnicodeObject);
  printf("FRAME_OWNED_BY_GENERATOR %d\n", FRAME_OWNED_BY_GENERATOR);
  /* The state's bit-fields: where each starts, found by setting it alone. */
  PyASCIIObject s;
  unsigned bits;
  memset(&s, 0, sizeof s);
  s.state.kind = 1;
  memcpy(&bits, &s.state, sizeof bits);
  printf("PyASCIIObject::state.kind %d\n", __builtin_ctz(bits));
  memset(&s, 0, sizeof s);
  s.state.compact = 1;
  memcpy(&bits, &s.state, sizeof bits);
  printf("PyASCIIObject::state.compact %d\n", __builtin_ctz(bits));
  memset(&s, 0, sizeof s);
  s.state.ascii = 1;
  memcpy(&bits, &s.state, sizeof bits);
  printf("PyASCIIObject::state.ascii %d\n", __builtin_ctz(bits));
  printf("PY_VERSION %s\n", PY_VERSION);
  return 0;
}
