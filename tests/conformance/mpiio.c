/* Conformance test: MPI-IO through views, collective, nonblocking and shared-pointer access with a tool
 * interposed. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/*
 * File layout: the file is a sequence of 64-byte rows of 16 ints; rank r owns
 * ints 4r..4r+3 of every row. Rows 0-7 are written collectively, rows 8-9 with
 * MPI_File_iwrite_at, and after them MPI_File_write_ordered appends
 * 1+2+3+4 ints in rank order.
 */
enum {
  BLOCK_INTS = 4,
  ROW_INTS = BLOCK_INTS * NRANKS,
  COLLECTIVE_ROWS = 8,
  NONBLOCKING_ROWS = 2,
  DATA_ROWS = COLLECTIVE_ROWS + NONBLOCKING_ROWS,
  ORDERED_INTS = 10
};

/* The int stored at a given row and position of rank's block. */
static int file_value(int owner, int row, int position) { return owner * 100000 + row * 100 + position; }

static long long weighted_sum(const int *values, int count) {
  long long sum = 0;
  for (int i = 0; i < count; i++) sum += (long long)(i + 1) * values[i];
  return sum;
}

/*
 * Rank 0 picks the name and shares it. Its pid keeps concurrent runs apart; the
 * start time keeps a file left behind by a crashed run from colliding with a
 * later run that happens to get the same pid (common in containers).
 */
static void make_path(char *path, int capacity) {
  long long identity[2] = {(long long)getpid(), (long long)time(NULL)};
  MPI_Bcast(identity, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  const char *directory = getenv("TMPDIR");
  if (!directory || !*directory) directory = "/tmp";
  int length = snprintf(path, (size_t)capacity, "%s/mpe_conformance_mpiio_%lld_%lld.dat", directory,
                        identity[0], identity[1]);
  if (length < 0 || length >= capacity) {
    fprintf(stderr, "mpiio: file path too long\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "mpiio")) return 1;

  char path[4096];
  make_path(path, sizeof path);

  MPI_File file;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_EXCL, MPI_INFO_NULL,
                         &file);
  int opened = rc == MPI_SUCCESS;
  int all_opened = 0;
  MPI_Allreduce(&opened, &all_opened, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  check("file_open", all_opened, all_opened);
  if (!all_opened) {
    if (opened) MPI_File_close(&file);
    return finish("mpiio");
  }

  /* The filetype tiles one block per row; the displacement picks this rank's column. */
  MPI_Datatype block, filetype;
  MPI_Type_contiguous(BLOCK_INTS, MPI_INT, &block);
  MPI_Type_create_resized(block, 0, (MPI_Aint)(ROW_INTS * sizeof(int)), &filetype);
  MPI_Type_commit(&filetype);
  MPI_Offset displacement = (MPI_Offset)(rank * BLOCK_INTS * sizeof(int));
  rc = MPI_File_set_view(file, displacement, MPI_INT, filetype, "native", MPI_INFO_NULL);
  check("set_view", rc == MPI_SUCCESS, rc == MPI_SUCCESS);

  int written[COLLECTIVE_ROWS * BLOCK_INTS], read_back[COLLECTIVE_ROWS * BLOCK_INTS];
  for (int row = 0; row < COLLECTIVE_ROWS; row++)
    for (int k = 0; k < BLOCK_INTS; k++) {
      written[row * BLOCK_INTS + k] = file_value(rank, row, k);
      read_back[row * BLOCK_INTS + k] = -1;
    }
  MPI_Status status;
  int count = -1;
  rc = MPI_File_write_at_all(file, 0, written, COLLECTIVE_ROWS * BLOCK_INTS, MPI_INT, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  check("write_at_all", count, rc == MPI_SUCCESS && count == COLLECTIVE_ROWS * BLOCK_INTS);

  /* Reading back only this rank's own data needs no sync with the other writers. */
  rc = MPI_File_read_at_all(file, 0, read_back, COLLECTIVE_ROWS * BLOCK_INTS, MPI_INT, &status);
  int ok = rc == MPI_SUCCESS;
  for (int i = 0; i < COLLECTIVE_ROWS * BLOCK_INTS; i++) ok &= read_back[i] == written[i];
  check("read_at_all", weighted_sum(read_back, COLLECTIVE_ROWS * BLOCK_INTS), ok);

  /* Offsets are in etypes relative to the view, so offset 32 is row 8 of this rank's column. */
  int later[NONBLOCKING_ROWS * BLOCK_INTS];
  for (int row = 0; row < NONBLOCKING_ROWS; row++)
    for (int k = 0; k < BLOCK_INTS; k++)
      later[row * BLOCK_INTS + k] = file_value(rank, COLLECTIVE_ROWS + row, k);
  MPI_Request request;
  rc = MPI_File_iwrite_at(file, COLLECTIVE_ROWS * BLOCK_INTS, later, NONBLOCKING_ROWS * BLOCK_INTS, MPI_INT,
                          &request);
  ok = rc == MPI_SUCCESS;
  MPI_Wait(&request, &status);
  count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  check("iwrite_at_wait", count, ok && count == NONBLOCKING_ROWS * BLOCK_INTS && request == MPI_REQUEST_NULL);

  /* sync-barrier-sync is MPI's recipe for making other ranks' writes visible. */
  MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(file);

  MPI_Offset size = -1;
  MPI_File_get_size(file, &size);
  check("get_size_data", (long long)size, size == (MPI_Offset)(DATA_ROWS * ROW_INTS * sizeof(int)));

  /* A plain int view over the whole file: every rank reads all data back. */
  MPI_File_set_view(file, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  static int whole[DATA_ROWS * ROW_INTS];
  rc = MPI_File_read_at_all(file, 0, whole, DATA_ROWS * ROW_INTS, MPI_INT, &status);
  ok = rc == MPI_SUCCESS;
  for (int row = 0; row < DATA_ROWS; row++)
    for (int owner = 0; owner < NRANKS; owner++)
      for (int k = 0; k < BLOCK_INTS; k++)
        ok &= whole[row * ROW_INTS + owner * BLOCK_INTS + k] == file_value(owner, row, k);
  check("read_whole_file", weighted_sum(whole, DATA_ROWS * ROW_INTS) % 1000000007, ok);

  /* Shared file pointer: rank r appends r+1 ints, and ranks take their turns in rank order. */
  MPI_Offset data_end = (MPI_Offset)(DATA_ROWS * ROW_INTS * sizeof(int));
  MPI_File_set_view(file, data_end, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  int appended[NRANKS];
  for (int k = 0; k <= rank; k++) appended[k] = 900000 + rank * 10 + k;
  rc = MPI_File_write_ordered(file, appended, rank + 1, MPI_INT, &status);
  ok = rc == MPI_SUCCESS;
  MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(file);
  int tail[ORDERED_INTS];
  for (int i = 0; i < ORDERED_INTS; i++) tail[i] = -1;
  rc = MPI_File_read_at_all(file, 0, tail, ORDERED_INTS, MPI_INT, &status);
  ok &= rc == MPI_SUCCESS;
  for (int owner = 0, i = 0; owner < NRANKS; owner++)
    for (int k = 0; k <= owner; k++, i++) ok &= tail[i] == 900000 + owner * 10 + k;
  check("write_ordered", weighted_sum(tail, ORDERED_INTS), ok);

  size = -1;
  MPI_File_get_size(file, &size);
  check("get_size_total", (long long)size, size == data_end + (MPI_Offset)(ORDERED_INTS * sizeof(int)));

  rc = MPI_File_close(&file);
  check("file_close", rc == MPI_SUCCESS, rc == MPI_SUCCESS && file == MPI_FILE_NULL);
  MPI_Type_free(&block);
  MPI_Type_free(&filetype);

  /* Everyone has closed before rank 0 deletes; afterwards opening must fail (files default to
   * MPI_ERRORS_RETURN). */
  MPI_Barrier(MPI_COMM_WORLD);
  int deleted = 1;
  if (rank == 0) deleted = MPI_File_delete(path, MPI_INFO_NULL) == MPI_SUCCESS;
  MPI_Bcast(&deleted, 1, MPI_INT, 0, MPI_COMM_WORLD);
  check("file_delete", deleted, deleted);

  MPI_File missing;
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &missing);
  int error_class = MPI_SUCCESS;
  if (rc != MPI_SUCCESS)
    MPI_Error_class(rc, &error_class);
  else
    MPI_File_close(&missing);
  /* Implementations may report a missing file as MPI_ERR_NO_SUCH_FILE or a generic I/O error. */
  int class_ok =
      error_class == MPI_ERR_NO_SUCH_FILE || error_class == MPI_ERR_IO || error_class == MPI_ERR_FILE;
  check("open_deleted_fails", rc != MPI_SUCCESS, rc != MPI_SUCCESS && class_ok);

  return finish("mpiio");
}
