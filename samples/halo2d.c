/* Sample: 2-D Jacobi stencil with nonblocking halo exchange on a Cartesian communicator. */
/*
 * Usage: mpiexec -n P halo2d [iterations]   (iterations defaults to 20)
 *
 * Each rank owns a 64x64 block of a global grid laid out by MPI_Dims_create.
 * The grid is not periodic: edges next to MPI_PROC_NULL keep fixed boundary
 * values (1.0 along the global top edge, 0.0 elsewhere).
 *
 * Exact MPI calls per rank (I = iterations):
 *   MPI_Init 1, MPI_Comm_rank 1, MPI_Comm_size 1, MPI_Dims_create 1,
 *   MPI_Cart_create 1, MPI_Cart_coords 1, MPI_Cart_shift 2,
 *   MPI_Type_vector 1, MPI_Type_commit 1,
 *   MPI_Irecv 4*I, MPI_Isend 4*I, MPI_Waitall I  (edge ranks talk to MPI_PROC_NULL),
 *   MPI_Allreduce 1, MPI_Type_free 1, MPI_Comm_free 1, MPI_Finalize 1.
 * Environment knobs (for `mpe diff`'s tests; unset: none of this):
 *   HALO2D_DELAY_RANK=r HALO2D_DELAY_US=us  us microseconds of extra time on rank r before its
 *     sends, in every iteration, or only in iterations a..b (from 0) with HALO2D_DELAY_ITERATIONS=a-b;
 *   HALO2D_ALLREDUCE=1  a convergence check per iteration: MPI_Allreduce I more, on MPI_COMM_WORLD;
 *   HALO2D_PCONTROL=1   MPI_Pcontrol(1) at the start of each iteration, MPI_Pcontrol(0) at its end.
 *
 * The residual is the largest change of any cell in the last sweep; a max
 * reduction is exact in any order, so the printed value depends only on P.
 * Rank 0 recomputes the whole grid serially and requires a bit-identical residual.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LOCAL_N = 64 };

/* Shared by the parallel and the serial sweep so both round identically. */
static double stencil(const double *u, int stride, int i, int j) {
  return 0.25 *
         (u[(i - 1) * stride + j] + u[(i + 1) * stride + j] + u[i * stride + j - 1] + u[i * stride + j + 1]);
}

static double initial_value(int global_row, int global_col) {
  return (double)((global_row * 7 + global_col * 13) % 17) / 16.0;
}

/* One sweep from `from` to `to` over rows 1..rows and columns 1..cols; returns the largest change. */
static double sweep(const double *from, double *to, int rows, int cols, int stride) {
  double largest = 0.0;
  for (int i = 1; i <= rows; i++)
    for (int j = 1; j <= cols; j++) {
      double value = stencil(from, stride, i, j);
      double change = fabs(value - from[i * stride + j]);
      if (change > largest) largest = change;
      to[i * stride + j] = value;
    }
  return largest;
}

/* Fills a grid with interior values and fixed boundary values; origin is the global index of interior cell
 * (1,1). */
static void fill_grid(double *u, int rows, int cols, int stride, int origin_row, int origin_col,
                      int top_is_global_edge) {
  memset(u, 0, sizeof(double) * (size_t)(rows + 2) * (size_t)stride);
  for (int i = 1; i <= rows; i++)
    for (int j = 1; j <= cols; j++) u[i * stride + j] = initial_value(origin_row + i - 1, origin_col + j - 1);
  if (top_is_global_edge)
    for (int j = 1; j <= cols; j++) u[j] = 1.0;
}

/* Stands for `us` microseconds of extra compute. It sleeps rather than spins: on a machine with
 * more ranks than cores a spinning rank would also take the cores of the ranks that wait for it,
 * and the delay would no longer be the time it adds. */
static void delay_us(long us) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += us / 1000000L;
  t.tv_nsec += (us % 1000000L) * 1000L;
  if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {
  }
}

static double serial_residual(int global_rows, int global_cols, int iterations) {
  int stride = global_cols + 2;
  size_t cells = (size_t)(global_rows + 2) * (size_t)stride;
  double *u = malloc(sizeof(double) * cells);
  double *next = malloc(sizeof(double) * cells);
  if (!u || !next) {
    fprintf(stderr, "halo2d: cannot allocate the serial reference grid\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fill_grid(u, global_rows, global_cols, stride, 0, 0, 1);
  fill_grid(next, global_rows, global_cols, stride, 0, 0, 1);
  double residual = 0.0;
  for (int it = 0; it < iterations; it++) {
    residual = sweep(u, next, global_rows, global_cols, stride);
    double *swap = u;
    u = next;
    next = swap;
  }
  free(u);
  free(next);
  return residual;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);

  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int iterations = argc > 1 ? atoi(argv[1]) : 20;
  if (iterations < 1) {
    if (rank == 0) fprintf(stderr, "halo2d: iterations must be >= 1\n");
    MPI_Finalize();
    return 1;
  }

  int dims[2] = {0, 0};
  int periods[2] = {0, 0};
  MPI_Dims_create(nranks, 2, dims);
  MPI_Comm cart;
  /* No reordering keeps rank 0 of the grid equal to world rank 0, which prints. */
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);

  int coords[2];
  MPI_Cart_coords(cart, rank, 2, coords);
  int up, down, left, right;
  MPI_Cart_shift(cart, 0, 1, &up, &down);
  MPI_Cart_shift(cart, 1, 1, &left, &right);

  const int stride = LOCAL_N + 2;
  size_t cells = (size_t)stride * (size_t)stride;
  double *u = malloc(sizeof(double) * cells);
  double *next = malloc(sizeof(double) * cells);
  if (!u || !next) {
    fprintf(stderr, "halo2d: rank %d cannot allocate its grid\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int origin_row = coords[0] * LOCAL_N;
  int origin_col = coords[1] * LOCAL_N;
  /* Both buffers carry the fixed boundary because the sweep alternates between them. */
  fill_grid(u, LOCAL_N, LOCAL_N, stride, origin_row, origin_col, up == MPI_PROC_NULL);
  fill_grid(next, LOCAL_N, LOCAL_N, stride, origin_row, origin_col, up == MPI_PROC_NULL);

  MPI_Datatype column;
  MPI_Type_vector(LOCAL_N, 1, stride, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  /* Tags name the direction of travel so a message can never match the wrong halo. */
  enum { TO_UP, TO_DOWN, TO_LEFT, TO_RIGHT };

  /* A known slowdown for `mpe diff`'s tests: HALO2D_DELAY_US microseconds of extra time on rank
   * HALO2D_DELAY_RANK before its first send of every iteration (or of iterations a..b, counted from
   * 0, with HALO2D_DELAY_ITERATIONS=a-b). Unset: no delay. */
  const char *delay_rank_env = getenv("HALO2D_DELAY_RANK");
  const char *delay_us_env = getenv("HALO2D_DELAY_US");
  const char *delay_iterations_env = getenv("HALO2D_DELAY_ITERATIONS");
  const long delay = delay_rank_env && delay_us_env && atoi(delay_rank_env) == rank ? atol(delay_us_env) : 0;
  int delay_first = 0, delay_last = iterations - 1;
  if (delay_iterations_env && sscanf(delay_iterations_env, "%d-%d", &delay_first, &delay_last) != 2) {
    if (rank == 0) fprintf(stderr, "halo2d: HALO2D_DELAY_ITERATIONS wants a-b\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Phases other programs mark: a convergence check per iteration, Pcontrol around each one. */
  const int check_every_iteration = getenv("HALO2D_ALLREDUCE") && atoi(getenv("HALO2D_ALLREDUCE")) != 0;
  const int pcontrol_iterations = getenv("HALO2D_PCONTROL") && atoi(getenv("HALO2D_PCONTROL")) != 0;

  double local_residual = 0.0;
  for (int it = 0; it < iterations; it++) {
    MPI_Request requests[8];
    MPI_Status statuses[8];
    if (pcontrol_iterations) MPI_Pcontrol(1);
    MPI_Irecv(&u[0 * stride + 1], LOCAL_N, MPI_DOUBLE, up, TO_DOWN, cart, &requests[0]);
    MPI_Irecv(&u[(LOCAL_N + 1) * stride + 1], LOCAL_N, MPI_DOUBLE, down, TO_UP, cart, &requests[1]);
    MPI_Irecv(&u[1 * stride + 0], 1, column, left, TO_RIGHT, cart, &requests[2]);
    MPI_Irecv(&u[1 * stride + LOCAL_N + 1], 1, column, right, TO_LEFT, cart, &requests[3]);
    if (delay > 0 && it >= delay_first && it <= delay_last) delay_us(delay);
    MPI_Isend(&u[1 * stride + 1], LOCAL_N, MPI_DOUBLE, up, TO_UP, cart, &requests[4]);
    MPI_Isend(&u[LOCAL_N * stride + 1], LOCAL_N, MPI_DOUBLE, down, TO_DOWN, cart, &requests[5]);
    MPI_Isend(&u[1 * stride + 1], 1, column, left, TO_LEFT, cart, &requests[6]);
    MPI_Isend(&u[1 * stride + LOCAL_N], 1, column, right, TO_RIGHT, cart, &requests[7]);
    /* A real status array: GCC 12 warns about MPICH's MPI_STATUSES_IGNORE at -O2. */
    MPI_Waitall(8, requests, statuses);

    local_residual = sweep(u, next, LOCAL_N, LOCAL_N, stride);
    double *swap = u;
    u = next;
    next = swap;
    if (check_every_iteration) {
      double largest;
      MPI_Allreduce(&local_residual, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (pcontrol_iterations) MPI_Pcontrol(0);
  }

  double residual;
  MPI_Allreduce(&local_residual, &residual, 1, MPI_DOUBLE, MPI_MAX, cart);

  int ok = 1;
  if (rank == 0) {
    double expected = serial_residual(dims[0] * LOCAL_N, dims[1] * LOCAL_N, iterations);
    if (residual != expected) {
      fprintf(stderr, "halo2d: residual %.17g differs from serial reference %.17g\n", residual, expected);
      ok = 0;
    }
    printf("halo2d: ranks=%d iterations=%d residual=%.6e\n", nranks, iterations, residual);
  }

  MPI_Type_free(&column);
  MPI_Comm_free(&cart);
  free(u);
  free(next);
  MPI_Finalize();
  return ok ? 0 : 1;
}
