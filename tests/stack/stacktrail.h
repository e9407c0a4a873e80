/* Shared by the test layers: the depth of the current call in the stack of foreign layers. */
#ifndef STACKTRAIL_H
#define STACKTRAIL_H

/* Returns how many layers' wrappers this thread is inside, then counts the caller's in. */
int stacktrail_enter(void);
/* Counts the caller's wrapper out again. */
void stacktrail_leave(void);

#endif
