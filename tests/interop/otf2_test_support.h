// What the OTF2 unit tests share: scratch paths, the definitions of a two-rank log, and the
// skeleton of reading an archive back with OTF2's own reader (each test brings its callbacks).
#pragma once

#include <gtest/gtest.h>
#include <otf2/otf2.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_layout.h"

namespace otf2_test {

// A scratch file name unique to this test process.
inline std::string temp_path(const std::string& test, const std::string& name) {
  return ::testing::TempDir() + test + "_" + std::to_string(getpid()) + "_" + name;
}

// Two ranks on host "h", one thread each, with MPI_COMM_WORLD and each rank's MPI_COMM_SELF, and
// the given MPI routines as categories 0, 1, ...; 1 tick = 1 ns.
inline mpe::format::Definitions two_rank_definitions(const std::string& program,
                                                     const std::vector<std::string>& mpi) {
  using namespace mpe::format;
  Definitions d;
  d.world_size = 2;
  d.program = program;
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = mpi_categories(mpi);
  for (uint32_t r = 0; r < 2; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 2;
    m.host = "h";
    m.threads = {ThreadDef{0, 100 + r}};
    m.comms = {CommDef{0, 0, false, {0, 1}}, CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}}};
    d.ranks.push_back(m);
  }
  return d;
}

// Reads the archive in `dir` into *seen: its global strings and locations (Seen::strings, a map
// from string ref to text, and Seen::locations, a vector) plus whatever `defs` and `events` record;
// each location's local definitions (the mapping tables) are read before its events. Takes and
// deletes both callback sets; the callbacks get `seen` as their user data.
template <class Seen>
void read_archive(const std::string& dir, OTF2_GlobalDefReaderCallbacks* defs,
                  OTF2_EvtReaderCallbacks* events, Seen* seen) {
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(defs, [](void* u, OTF2_StringRef self, const char* s) {
    static_cast<Seen*>(u)->strings[self] = s;
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      defs,
      [](void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t, OTF2_LocationGroupRef) {
        static_cast<Seen*>(u)->locations.push_back(self);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_Reader* r = OTF2_Reader_Open((dir + "/traces.otf2").c_str());
  EXPECT_NE(r, nullptr);
  if (r) {
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    uint64_t n = 0;
    OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
    OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, defs, seen);
    EXPECT_EQ(OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n), OTF2_SUCCESS);
    OTF2_Reader_CloseGlobalDefReader(r, gdr);
    for (uint64_t l : seen->locations) OTF2_Reader_SelectLocation(r, l);
    EXPECT_EQ(OTF2_Reader_OpenDefFiles(r), OTF2_SUCCESS);
    EXPECT_EQ(OTF2_Reader_OpenEvtFiles(r), OTF2_SUCCESS);
    for (uint64_t l : seen->locations) {
      OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, l);
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, l)) {  // the mapping tables
        OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
        OTF2_Reader_CloseDefReader(r, dr);
      }
      OTF2_Reader_RegisterEvtCallbacks(r, er, events, seen);
      EXPECT_EQ(OTF2_Reader_ReadAllLocalEvents(r, er, &n), OTF2_SUCCESS);
      OTF2_Reader_CloseEvtReader(r, er);
    }
    OTF2_Reader_CloseDefFiles(r);
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
  }
  OTF2_GlobalDefReaderCallbacks_Delete(defs);
  OTF2_EvtReaderCallbacks_Delete(events);
}

}  // namespace otf2_test
