/* Conformance test: derived datatypes, packing, attributes and error handlers behave the same with a tool
 * interposed. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int left, right;

static long long weighted_sum(const int *values, int count) {
  long long sum = 0;
  for (int i = 0; i < count; i++) sum += (long long)(i + 1) * values[i];
  return sum;
}

/* Everything the standard fixes about a type's layout, folded into one number per type. */
struct layout {
  int size;
  MPI_Aint lb, extent, true_lb, true_extent;
  int integers, addresses, datatypes, combiner;
};

static struct layout describe(MPI_Datatype type) {
  struct layout l;
  MPI_Type_size(type, &l.size);
  MPI_Type_get_extent(type, &l.lb, &l.extent);
  MPI_Type_get_true_extent(type, &l.true_lb, &l.true_extent);
  MPI_Type_get_envelope(type, &l.integers, &l.addresses, &l.datatypes, &l.combiner);
  return l;
}

/*
 * Asks for exactly the counts the envelope reported: Open MPI 4.1 crashes when
 * the arrays are larger (open-mpi/ompi#14051), although the standard allows it.
 * Callers only pass types whose constituents are predefined, so nothing needs freeing.
 */
static void get_contents(MPI_Datatype type, struct layout l, int *integers, MPI_Aint *addresses,
                         MPI_Datatype *types) {
  MPI_Type_get_contents(type, l.integers, l.addresses, l.datatypes, integers, addresses, types);
}

static int layout_is(struct layout l, int size, MPI_Aint lb, MPI_Aint extent, int combiner) {
  return l.size == size && l.lb == lb && l.extent == extent && l.combiner == combiner;
}

static long long layout_value(struct layout l) {
  return ((long long)l.size * 1000 + (long long)l.extent) * 1000 + (long long)l.lb;
}

static void test_constructors(void) {
  int sizes_ok = 1;
  long long value = 0;

  MPI_Datatype contiguous, vector, hvector, indexed, indexed_block, subarray, resized, duplicate;
  MPI_Type_contiguous(3, MPI_INT, &contiguous);
  MPI_Type_vector(3, 2, 4, MPI_INT, &vector);
  MPI_Type_create_hvector(3, 1, 2 * (MPI_Aint)sizeof(int), MPI_INT, &hvector);
  int block_lengths[3] = {2, 1, 3}, displacements[3] = {0, 4, 7};
  MPI_Type_indexed(3, block_lengths, displacements, MPI_INT, &indexed);
  int block_starts[3] = {1, 5, 9};
  MPI_Type_create_indexed_block(3, 2, block_starts, MPI_INT, &indexed_block);
  int full[2] = {6, 6}, part[2] = {3, 2}, corner[2] = {1, 2};
  MPI_Type_create_subarray(2, full, part, corner, MPI_ORDER_C, MPI_INT, &subarray);
  MPI_Type_create_resized(MPI_INT, 0, 3 * (MPI_Aint)sizeof(int), &resized);
  MPI_Type_dup(vector, &duplicate);

  MPI_Datatype all[8] = {contiguous, vector, hvector, indexed, indexed_block, subarray, resized, duplicate};
  for (int i = 0; i < 8; i++) MPI_Type_commit(&all[i]);

  const int I = (int)sizeof(int);
  struct {
    int size;
    MPI_Aint lb, extent;
    int combiner;
  } expected[8] = {
      {3 * I, 0, 3 * I, MPI_COMBINER_CONTIGUOUS},
      {6 * I, 0, 10 * I, MPI_COMBINER_VECTOR},
      {3 * I, 0, 5 * I, MPI_COMBINER_HVECTOR},
      {6 * I, 0, 10 * I, MPI_COMBINER_INDEXED},
      {6 * I, 1 * I, 10 * I, MPI_COMBINER_INDEXED_BLOCK},
      {6 * I, 0, 36 * I, MPI_COMBINER_SUBARRAY},
      {1 * I, 0, 3 * I, MPI_COMBINER_RESIZED},
      {6 * I, 0, 10 * I, MPI_COMBINER_DUP},
  };
  for (int i = 0; i < 8; i++) {
    struct layout l = describe(all[i]);
    sizes_ok &= layout_is(l, expected[i].size, expected[i].lb, expected[i].extent, expected[i].combiner);
    value = (value * 7 + layout_value(l)) % 1000000007;
  }
  /* The subarray's data starts at row 1, column 2 of the 6x6 array and ends at row 3, column 3. */
  struct layout sub = describe(subarray);
  sizes_ok &= sub.true_lb == (1 * 6 + 2) * I && sub.true_extent == ((3 * 6 + 3) - (1 * 6 + 2) + 1) * I;
  check("type_layouts", value, sizes_ok);

  /* Get_contents hands back exactly the constructor arguments. */
  int integers[8] = {0};
  MPI_Aint addresses[2];
  MPI_Datatype types[2];
  struct layout v = describe(vector);
  int ok = v.integers == 3 && v.addresses == 0 && v.datatypes == 1;
  if (ok) {
    get_contents(vector, v, integers, addresses, types);
    ok = integers[0] == 3 && integers[1] == 2 && integers[2] == 4 && types[0] == MPI_INT;
  }
  struct layout h = describe(hvector);
  ok &= h.integers == 2 && h.addresses == 1 && h.datatypes == 1;
  if (ok) {
    get_contents(hvector, h, integers, addresses, types);
    ok = integers[0] == 3 && integers[1] == 1 && addresses[0] == 2 * I && types[0] == MPI_INT;
  }
  int named_integers, named_addresses, named_datatypes, named_combiner;
  MPI_Type_get_envelope(MPI_INT, &named_integers, &named_addresses, &named_datatypes, &named_combiner);
  ok &= named_combiner == MPI_COMBINER_NAMED;
  check("type_contents", v.integers * 100 + h.integers * 10 + h.addresses, ok);

  /*
   * Communication: a vector is received as plain ints, a subarray likewise,
   * and a resized int picks every third element.
   */
  int matrix[4 * 4], column[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 16; i++) matrix[i] = rank * 100 + i;
  MPI_Datatype matrix_column;
  MPI_Type_vector(4, 1, 4, MPI_INT, &matrix_column);
  MPI_Type_commit(&matrix_column);
  MPI_Status status;
  /* Column 1 of the sender's 4x4 matrix. */
  MPI_Sendrecv(&matrix[1], 1, matrix_column, right, 1, column, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &status);
  int count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  ok = count == 4;
  for (int i = 0; i < 4; i++) ok &= column[i] == left * 100 + i * 4 + 1;
  MPI_Type_free(&matrix_column);
  check("send_vector_receive_ints", weighted_sum(column, 4), ok);

  int grid[36], piece[6];
  for (int i = 0; i < 36; i++) grid[i] = rank * 100 + i;
  MPI_Sendrecv(grid, 1, subarray, right, 2, piece, 6, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ok = 1;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 2; c++) ok &= piece[r * 2 + c] == left * 100 + (1 + r) * 6 + 2 + c;
  check("send_subarray", weighted_sum(piece, 6), ok);

  int spaced[12], dense[4];
  for (int i = 0; i < 12; i++) spaced[i] = rank * 100 + i;
  MPI_Sendrecv(spaced, 4, resized, right, 3, dense, 4, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ok = 1;
  for (int i = 0; i < 4; i++) ok &= dense[i] == left * 100 + 3 * i;
  check("send_resized", weighted_sum(dense, 4), ok);

  /* Receiving 4 ints into a 6-int vector: a partial element, so Get_count is undefined but Get_elements is 4.
   */
  int target[10];
  for (int i = 0; i < 10; i++) target[i] = -1;
  int four[4] = {rank, rank + 1, rank + 2, rank + 3};
  MPI_Sendrecv(four, 4, MPI_INT, right, 4, target, 1, vector, left, 4, MPI_COMM_WORLD, &status);
  int elements = -1;
  count = -2;
  MPI_Get_count(&status, vector, &count);
  MPI_Get_elements(&status, vector, &elements);
  /* The vector's first two blocks are ints 0,1 and 4,5. */
  ok = count == MPI_UNDEFINED && elements == 4 && target[0] == left && target[1] == left + 1 &&
       target[2] == -1 && target[4] == left + 2 && target[5] == left + 3 && target[8] == -1;
  check("partial_receive_elements", elements, ok);

  for (int i = 0; i < 8; i++) MPI_Type_free(&all[i]);
  check("type_free", 1, all[0] == MPI_DATATYPE_NULL && all[7] == MPI_DATATYPE_NULL);
}

struct record {
  int id;
  double weight;
  char code[3];
};

static void test_struct(void) {
  int lengths[3] = {1, 1, 3};
  MPI_Aint offsets[3] = {offsetof(struct record, id), offsetof(struct record, weight),
                         offsetof(struct record, code)};
  MPI_Datatype field_types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype raw, record_type;
  MPI_Type_create_struct(3, lengths, offsets, field_types, &raw);
  /* Resizing to sizeof(struct record) makes arrays of records step over the trailing padding. */
  MPI_Type_create_resized(raw, 0, (MPI_Aint)sizeof(struct record), &record_type);
  MPI_Type_commit(&record_type);

  struct layout l = describe(record_type);
  struct layout r = describe(raw);
  int ok = l.size == (int)(sizeof(int) + sizeof(double) + 3) && l.extent == (MPI_Aint)sizeof(struct record) &&
           r.combiner == MPI_COMBINER_STRUCT && r.integers == 4 && r.addresses == 3 && r.datatypes == 3;
  if (ok) {
    int integers[4];
    MPI_Aint addresses[3];
    MPI_Datatype types[3];
    get_contents(raw, r, integers, addresses, types);
    ok = integers[0] == 3 && integers[3] == 3 && addresses[1] == offsets[1] && types[0] == MPI_INT &&
         types[1] == MPI_DOUBLE && types[2] == MPI_CHAR;
  }
  check("struct_layout", l.size, ok);

  struct record out[2], in[2];
  memset(out, 0, sizeof out);
  memset(in, 0, sizeof in);
  for (int i = 0; i < 2; i++) {
    out[i].id = rank * 10 + i;
    out[i].weight = rank + 0.5 * i;
    memcpy(out[i].code, i ? "xyz" : "abc", 3);
  }
  MPI_Sendrecv(out, 2, record_type, right, 5, in, 2, record_type, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ok = 1;
  for (int i = 0; i < 2; i++)
    ok &= in[i].id == left * 10 + i && in[i].weight == left + 0.5 * i &&
          memcmp(in[i].code, i ? "xyz" : "abc", 3) == 0;
  check("send_struct", in[0].id * 100 + in[1].id + (long long)(in[1].weight * 2) * 10000, ok);

  MPI_Type_free(&record_type);
  MPI_Type_free(&raw);
}

/* Packs a strided vector plus two loose ints, ships the bytes as MPI_PACKED and unpacks them. */
static void test_pack(void) {
  MPI_Datatype vector;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vector);
  MPI_Type_commit(&vector);

  int vector_bound = -1, ints_bound = -1;
  MPI_Pack_size(1, vector, MPI_COMM_WORLD, &vector_bound);
  MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, &ints_bound);
  int capacity = vector_bound + ints_bound;
  char *packed = malloc((size_t)capacity);

  int strided[5] = {rank * 10, -7, rank * 10 + 1, -7, rank * 10 + 2};
  int loose[2] = {rank + 1000, rank + 2000};
  int position = 0;
  MPI_Pack(strided, 1, vector, packed, capacity, &position, MPI_COMM_WORLD);
  MPI_Pack(loose, 2, MPI_INT, packed, capacity, &position, MPI_COMM_WORLD);
  /* Packed sizes are implementation-specific, so only their consistency is checked. */
  int sizes_ok = position > 0 && position <= capacity;

  char *incoming = malloc((size_t)capacity);
  MPI_Status status;
  MPI_Sendrecv(packed, position, MPI_PACKED, right, 6, incoming, capacity, MPI_PACKED, left, 6,
               MPI_COMM_WORLD, &status);
  int incoming_size = -1;
  MPI_Get_count(&status, MPI_PACKED, &incoming_size);

  int unpacked_strided[5] = {-1, -1, -1, -1, -1}, unpacked_loose[2] = {-1, -1};
  int read_position = 0;
  MPI_Unpack(incoming, incoming_size, &read_position, unpacked_strided, 1, vector, MPI_COMM_WORLD);
  MPI_Unpack(incoming, incoming_size, &read_position, unpacked_loose, 2, MPI_INT, MPI_COMM_WORLD);
  int ok = sizes_ok && read_position == incoming_size && unpacked_strided[0] == left * 10 &&
           unpacked_strided[1] == -1 && unpacked_strided[2] == left * 10 + 1 && unpacked_strided[3] == -1 &&
           unpacked_strided[4] == left * 10 + 2 && unpacked_loose[0] == left + 1000 &&
           unpacked_loose[1] == left + 2000;
  check("pack_unpack", weighted_sum(unpacked_strided, 5) + weighted_sum(unpacked_loose, 2), ok);

  free(packed);
  free(incoming);
  MPI_Type_free(&vector);
}

static int copy_calls, delete_calls, extra_state_seen;
static int extra_state_marker;
static int attribute_payload = 42, replacement_payload = 43;

static int count_copy(MPI_Comm old_comm, int keyval, void *extra_state, void *value_in, void *value_out,
                      int *flag) {
  (void)old_comm;
  (void)keyval;
  copy_calls++;
  extra_state_seen += extra_state == &extra_state_marker;
  *(void **)value_out = value_in;
  *flag = 1;
  return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra_state) {
  (void)comm;
  (void)keyval;
  (void)value;
  delete_calls++;
  extra_state_seen += extra_state == &extra_state_marker;
  return MPI_SUCCESS;
}

static void test_attributes(void) {
  int copied_key, uncopied_key;
  MPI_Comm_create_keyval(count_copy, count_delete, &copied_key, &extra_state_marker);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &uncopied_key, NULL);

  MPI_Comm first;
  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_set_attr(first, copied_key, &attribute_payload);
  MPI_Comm_set_attr(first, uncopied_key, &replacement_payload);
  void *value = NULL;
  int flag = 0;
  MPI_Comm_get_attr(first, copied_key, &value, &flag);
  int ok = flag == 1 && value == &attribute_payload;

  /* Duplicating runs the copy callback once; the null copy function drops the other attribute. */
  MPI_Comm second;
  MPI_Comm_dup(first, &second);
  ok &= copy_calls == 1;
  value = NULL;
  MPI_Comm_get_attr(second, copied_key, &value, &flag);
  ok &= flag == 1 && value == &attribute_payload;
  MPI_Comm_get_attr(second, uncopied_key, &value, &flag);
  ok &= flag == 0;

  MPI_Comm_delete_attr(first, copied_key);
  ok &= delete_calls == 1;
  MPI_Comm_get_attr(first, copied_key, &value, &flag);
  ok &= flag == 0;

  /* Replacing a value deletes the old one first; freeing a communicator deletes what is left. */
  MPI_Comm_set_attr(first, copied_key, &attribute_payload);
  MPI_Comm_set_attr(first, copied_key, &replacement_payload);
  ok &= delete_calls == 2;
  MPI_Comm_free(&second);
  ok &= delete_calls == 3;
  MPI_Comm_free(&first);
  ok &= delete_calls == 4 && extra_state_seen == copy_calls + delete_calls;

  MPI_Comm_free_keyval(&copied_key);
  MPI_Comm_free_keyval(&uncopied_key);
  ok &= copied_key == MPI_KEYVAL_INVALID && uncopied_key == MPI_KEYVAL_INVALID;
  check("attribute_callbacks", copy_calls * 10 + delete_calls, ok);

  /* The tag bound is the implementation's choice; the standard only promises at least 32767. */
  int *tag_ub = NULL;
  flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  int tag_ub_valid = flag == 1 && tag_ub != NULL && *tag_ub >= 32767;
  check("tag_ub_valid", tag_ub_valid, tag_ub_valid);
}

static int handler_calls;
static int last_error_code;

static void count_errors(MPI_Comm *comm, int *error_code, ...) {
  (void)comm;
  handler_calls++;
  last_error_code = *error_code;
}

static void test_error_handlers(void) {
  MPI_Errhandler counting;
  MPI_Comm_create_errhandler(count_errors, &counting);
  MPI_Comm counted;
  MPI_Comm_dup(MPI_COMM_WORLD, &counted);
  MPI_Comm_set_errhandler(counted, counting);

  MPI_Comm_call_errhandler(counted, MPI_ERR_OTHER);
  int ok = handler_calls == 1 && last_error_code == MPI_ERR_OTHER;

  /* A real error: the handler runs instead of the default abort, and nothing is sent. */
  int payload = 1;
  int rc = MPI_Send(&payload, 1, MPI_INT, NRANKS + 5, 0, counted);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(last_error_code, &error_class);
  ok &= rc != MPI_SUCCESS && handler_calls == 2 && error_class == MPI_ERR_RANK;

  /* A user-defined error class and code travel through the handler unchanged. */
  int user_class, user_code;
  MPI_Add_error_class(&user_class);
  MPI_Add_error_code(user_class, &user_code);
  MPI_Add_error_string(user_code, "conformance user error");
  MPI_Comm_call_errhandler(counted, user_code);
  int user_code_class = -1;
  MPI_Error_class(last_error_code, &user_code_class);
  char text[MPI_MAX_ERROR_STRING];
  int text_length = 0;
  MPI_Error_string(user_code, text, &text_length);
  ok &= handler_calls == 3 && last_error_code == user_code && user_code_class == user_class &&
        strcmp(text, "conformance user error") == 0;

  MPI_Errhandler current;
  MPI_Comm_get_errhandler(counted, &current);
  MPI_Errhandler_free(&current);
  MPI_Comm_free(&counted);
  MPI_Errhandler_free(&counting);
  ok &= counting == MPI_ERRHANDLER_NULL;
  check("user_errhandler", handler_calls, ok);

  /* With MPI_ERRORS_RETURN the codes come back to the caller; the library prints nothing. */
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  int classes[3] = {MPI_SUCCESS, MPI_SUCCESS, MPI_SUCCESS};
  int codes[3];
  codes[0] = MPI_Send(&payload, 1, MPI_INT, NRANKS + 5, 0, returning);
  codes[1] = MPI_Send(&payload, -1, MPI_INT, right, 0, returning);
  codes[2] = MPI_Send(&payload, 1, MPI_INT, right, -3, returning);
  ok = 1;
  for (int i = 0; i < 3; i++) {
    ok &= codes[i] != MPI_SUCCESS;
    MPI_Error_class(codes[i], &classes[i]);
  }
  ok &= classes[0] == MPI_ERR_RANK && classes[1] == MPI_ERR_COUNT && classes[2] == MPI_ERR_TAG;
  /* Message texts differ between implementations; only that one exists is checked. */
  text_length = 0;
  MPI_Error_string(codes[0], text, &text_length);
  ok &= text_length > 0 && text_length < MPI_MAX_ERROR_STRING && (int)strlen(text) == text_length;
  MPI_Error_string(MPI_SUCCESS, text, &text_length);
  ok &= text_length > 0;
  MPI_Comm_free(&returning);
  check("errors_return_classes",
        (classes[0] == MPI_ERR_RANK) * 100 + (classes[1] == MPI_ERR_COUNT) * 10 + (classes[2] == MPI_ERR_TAG),
        ok);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "datatypes")) return 1;
  left = (rank + NRANKS - 1) % NRANKS;
  right = (rank + 1) % NRANKS;

  test_constructors();
  test_struct();
  test_pack();
  test_attributes();
  test_error_handlers();

  return finish("datatypes");
}
