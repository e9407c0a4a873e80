// libumq's reading of the unexpected-message-queue length: finding the MPI_T variable, one handle
// per communicator (or one for the process), and the read at the start of every receive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/core.h"
#include "umq_report.h"

namespace mpe::tools::umq {

using analysis::umq::VariableInfo;  // the variable being read, as the report describes it

// Starts MPI_T, picks the first of `names` whose class, type and binding libumq can read, opens a
// session and binds MPI_COMM_WORLD and MPI_COMM_SELF. Returns false, after one line on stderr
// from rank 0 saying why, when there is nothing to read. Throws std::bad_alloc.
bool start_reading(const std::vector<std::string>& names, uint64_t threshold) MPE_HIDDEN;
// Makes the receive hooks start (after start_reading returned true on every rank) or stop reading.
void set_reading(bool on) noexcept MPE_HIDDEN;
// True between set_reading(true) and set_reading(false).
bool reading() noexcept MPE_HIDDEN;
// Frees every handle, the session and MPI_T; reading stops for good.
void close_reader() noexcept MPE_HIDDEN;

// The variable being read, once start_reading has returned true.
const VariableInfo& variable() noexcept MPE_HIDDEN;
// Describes a communicator by the label id record() was given ("MPI_COMM_WORLD", "comm#2 from
// MPI_Comm_dup of MPI_COMM_WORLD (size 3)").
const char* communicator_label(int label) noexcept MPE_HIDDEN;

// Whether the receive hooks read (set_reading); plain data, read by every hook.
extern bool g_reading MPE_HIDDEN;

// At a receive: reads the queue (below the threshold: a compare with the thread's last
// communicator, one MPI_T_pvar_read, ~27 ns on Open MPI, and a sum; no lock, no allocation).
void on_receive(mpe::Call& call) noexcept MPE_HIDDEN;
// At MPI_Comm_free: frees the communicator's handle while the communicator still exists.
void on_comm_freed(mpe::Call& call) noexcept MPE_HIDDEN;
// After a comm_create-class call: binds a handle to the communicator it returned.
void on_comm_created(mpe::Call& call) noexcept MPE_HIDDEN;

}  // namespace mpe::tools::umq
