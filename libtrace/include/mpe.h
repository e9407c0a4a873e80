/* MPE's umbrella header, as in MPICH's MPE2: the logging API of liblog. */
#ifndef MPE_H
#define MPE_H
#include "mpe_log.h"
#endif /* MPE_H */
