/* MPE's logging API, source-compatible with MPICH's MPE2: user states and events in liblog's logfile. */
#ifndef MPE_LOG_H
#define MPE_LOG_H

#define MPE_LOG_OK 0
#define MPE_LOG_LOCKED_OUT 1
#define MPE_LOG_NO_MEMORY 2
#define MPE_LOG_FILE_PROB 3
#define MPE_LOG_NOT_INITIALIZED 4
#define MPE_LOG_PACK_FAIL 5
#define MPE_LOG_SUCCESS 0
#define MPE_LOG_FAIL (-1)
#define MPE_LOG_BYTESIZE 32

typedef char MPE_LOG_BYTES[MPE_LOG_BYTESIZE];

#ifdef __cplusplus
extern "C" {
#endif

/* Starts logging; liblog starts at MPI_Init, so this only checks that MPI is up. */
int MPE_Init_log(void);
/* Returns 1 once logging is initialized. */
int MPE_Initialized_logging(void);
/* Names the logfile (".mpelog" is appended when missing); the file is written at MPI_Finalize. */
int MPE_Finish_log(const char *filename);
/* Resumes or pauses logging, like MPI_Pcontrol(1) / MPI_Pcontrol(0). */
int MPE_Start_log(void);
int MPE_Stop_log(void);
/* Allocates the start and end event ids of a new state (call in the same order on every rank). */
int MPE_Log_get_state_eventIDs(int *statedef_startID, int *statedef_finalID);
/* Allocates the id of a solo event. */
int MPE_Log_get_solo_eventID(int *eventdef_eventID);
/* Allocates one event id (MPE1 API). */
int MPE_Log_get_event_number(void);
/* Names a state and gives it a colour ("red", "SeaGreen", "#rrggbb"). */
int MPE_Describe_state(int start, int end, const char *name, const char *color);
int MPE_Describe_info_state(int start, int end, const char *name, const char *color, const char *format);
/* Names a solo event and gives it a colour. */
int MPE_Describe_event(int event, const char *name, const char *color);
int MPE_Describe_info_event(int event, const char *name, const char *color, const char *format);
/* Logs an event; its first 8 data bytes are kept. */
int MPE_Log_event(int event, int data, const char *bytebuf);
int MPE_Log_bare_event(int event);
int MPE_Log_info_event(int event, const char *bytebuf);
/* Packs a value into an info byte buffer: tokentype 'd' int, 's' string, 'x' hex, 'E' double... */
int MPE_Log_pack(MPE_LOG_BYTES bytebuf, int *position, char tokentype, int count, const void *data);
/* Clocks are synchronised at MPI_Init and MPI_Finalize (offset and drift); this is a no-op. */
int MPE_Log_sync_clocks(void);
/* Logs a message this rank sent to / received from a rank of MPI_COMM_WORLD. */
int MPE_Log_send(int otherParty, int tag, int size);
int MPE_Log_receive(int otherParty, int tag, int size);

#ifdef __cplusplus
}

namespace mpe {
/* Logs a user state for the lifetime of a scope: `mpe::ScopedState s(start_id, end_id);`. */
class ScopedState {
 public:
  ScopedState(int start, int end) : end_(end) { MPE_Log_bare_event(start); }
  ~ScopedState() { MPE_Log_bare_event(end_); }
  ScopedState(const ScopedState &) = delete;
  ScopedState &operator=(const ScopedState &) = delete;

 private:
  int end_;
};
}  // namespace mpe
#endif

#endif /* MPE_LOG_H */
