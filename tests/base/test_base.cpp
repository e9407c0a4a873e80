// Unit tests of base/: Status and StatusOr, the byte codec and the frame encoding on it, and file
// I/O, including the checked writer's failure paths (a full disk is an RLIMIT_FSIZE limit).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpe/byte_codec.h"
#include "mpe/file_io.h"
#include "mpe/frame.h"
#include "mpe/status.h"

namespace {

using mpe::ByteReader;
using mpe::ByteWriter;
using mpe::Status;
using mpe::StatusCode;
using mpe::StatusOr;

// A fresh directory under TMPDIR, removed with its files at the end of the test.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/mpe-base-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    for (const std::string& f : files()) ::unlink((path_ + "/" + f).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // The names in the directory, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
      ::closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

// Limits the size of files this process writes (RLIMIT_FSIZE), with SIGXFSZ ignored so that a
// write past it fails with EFBIG instead of ending the process: a disk that is full after `bytes`.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(Status, DefaultIsOkAndNamesItsCode) {
  const Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.to_string(), "ok");
  const Status bad(StatusCode::kCorrupt, "bad chunk");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kCorrupt);
  EXPECT_EQ(bad.to_string(), "corrupt: bad chunk");
  EXPECT_EQ(Status(StatusCode::kTruncated, "").to_string(), "truncated");
  EXPECT_STREQ(mpe::status_code_name(StatusCode::kIoError), "I/O error");
}

TEST(Status, OutOfMemoryHasNoMessage) {
  const Status s = Status::out_of_memory();
  EXPECT_EQ(s.code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(s.message().empty());
  EXPECT_EQ(s.to_string(), "out of memory");
}

StatusOr<int> half(int x) {
  if (x % 2) return Status(StatusCode::kInvalidArgument, "odd");
  return x / 2;
}

Status halve_twice(int x, int* out) {
  auto a = half(x);
  MPE_RETURN_IF_ERROR(a.status());
  auto b = half(*a);
  MPE_RETURN_IF_ERROR(b.status());
  *out = *b;
  return Status();
}

TEST(StatusOr, HoldsValueOrError) {
  auto v = half(8);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value(), 4);
  EXPECT_TRUE(v.status().ok());
  auto e = half(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e.status().message(), "odd");
  StatusOr<std::string> s(std::string("abc"));
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(std::move(s).value(), "abc");
}

TEST(StatusOr, ReturnIfErrorStopsAtTheFirstError) {
  int out = -1;
  EXPECT_TRUE(halve_twice(12, &out).ok());
  EXPECT_EQ(out, 3);
  out = -1;
  EXPECT_EQ(halve_twice(6, &out).code(), StatusCode::kInvalidArgument);  // 6 -> 3 -> odd
  EXPECT_EQ(out, -1);
}

TEST(ByteCodec, RoundTripsEveryField) {
  ByteWriter w;
  w.u8(0xab);
  w.u32(0xdeadbeef);
  w.u64(0x0123456789abcdefull);
  w.i64(-42);
  w.f64(-0.15625);
  w.str("");
  w.str(std::string("a\0b", 3));
  const std::string& bytes = w.data();
  EXPECT_EQ(bytes.size(), 1u + 4 + 8 + 8 + 8 + 4 + 4 + 3);
  ByteReader r(bytes.data(), bytes.size());
  uint8_t a = 0;
  uint32_t b = 0;
  uint64_t c = 0;
  int64_t d = 0;
  double e = 0;
  std::string f = "x", g;
  ASSERT_TRUE(r.u8(&a) && r.u32(&b) && r.u64(&c) && r.i64(&d) && r.f64(&e) && r.str(&f) && r.str(&g));
  EXPECT_EQ(a, 0xab);
  EXPECT_EQ(b, 0xdeadbeefu);
  EXPECT_EQ(c, 0x0123456789abcdefull);
  EXPECT_EQ(d, -42);
  EXPECT_EQ(e, -0.15625);
  EXPECT_EQ(f, "");
  EXPECT_EQ(g, std::string("a\0b", 3));
  EXPECT_EQ(r.left(), 0u);
  EXPECT_FALSE(r.u8(&a));
}

TEST(ByteCodec, IsLittleEndian) {
  ByteWriter w;
  w.u32(0x04030201);
  EXPECT_EQ(w.data(), std::string("\x01\x02\x03\x04", 4));
}

TEST(ByteCodec, ShortReadsFailAndConsumeNothing) {
  ByteWriter w;
  w.u64(7);
  const std::string bytes = w.data().substr(0, 5);
  ByteReader r(bytes.data(), bytes.size());
  uint64_t v = 99;
  EXPECT_FALSE(r.u64(&v));
  EXPECT_EQ(v, 99u);
  EXPECT_EQ(r.left(), 5u);
  uint32_t u = 0;
  EXPECT_TRUE(r.u32(&u));  // what is there can still be read
  EXPECT_EQ(u, 7u);
}

TEST(ByteCodec, StringLongerThanTheBytesIsRejected) {
  ByteWriter w;
  w.str("hello");
  for (size_t cut = 0; cut < w.data().size(); ++cut) {
    ByteReader r(w.data().data(), cut);
    std::string s = "unchanged";
    EXPECT_FALSE(r.str(&s)) << "cut at " << cut;
    EXPECT_EQ(s, "unchanged");
  }
}

TEST(ByteCodec, CountRejectsWhatCannotFit) {
  ByteWriter w;
  w.u32(3);
  w.raw("0123456789ab", 12);  // room for 3 items of 4 bytes, not of 5
  ByteReader fits(w.data().data(), w.data().size());
  uint32_t n = 0;
  EXPECT_TRUE(fits.count(&n, 4));
  EXPECT_EQ(n, 3u);
  ByteReader too_big(w.data().data(), w.data().size());
  EXPECT_FALSE(too_big.count(&n, 5));
  ByteWriter huge;
  huge.u32(0xffffffff);
  ByteReader h(huge.data().data(), huge.data().size());
  EXPECT_FALSE(h.count(&n, 1));  // a damaged count asks for no allocation
}

TEST(FrameCodec, RoundTripsAndRejectsEveryTruncation) {
  std::vector<mpe::Frame> frames(2);
  frames[0] = {"exchange(int)", "/src/halo.c", 42, "/usr/lib/libfoo.so", 0x1a2b};
  frames[1] = {"main", "", 0, "/bin/app", 0xffffffffffull};
  ByteWriter w;
  mpe::encode_frames(w, frames);
  ByteReader r(w.data().data(), w.data().size());
  std::vector<mpe::Frame> back;
  ASSERT_TRUE(mpe::decode_frames(r, &back));
  EXPECT_EQ(r.left(), 0u);
  ASSERT_EQ(back.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back[i].function, frames[i].function);
    EXPECT_EQ(back[i].file, frames[i].file);
    EXPECT_EQ(back[i].line, frames[i].line);
    EXPECT_EQ(back[i].module, frames[i].module);
    EXPECT_EQ(back[i].offset, frames[i].offset);
  }
  for (size_t cut = 0; cut < w.data().size(); ++cut) {
    ByteReader t(w.data().data(), cut);
    EXPECT_FALSE(mpe::decode_frames(t, &back)) << "cut at " << cut;
  }
}

TEST(FileIo, WritesAndReadsBack) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string text = std::string("line one\n") + std::string(100000, 'x') + "\n";
  ASSERT_TRUE(mpe::io::write_file(dir / "out.txt", text).ok());
  auto back = mpe::io::read_file(dir / "out.txt");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, text);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"out.txt"});  // no temporary left
  struct stat st {};
  ASSERT_EQ(::stat((dir / "out.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0200, 0200u);  // owner may write it: 0644 less the umask
  EXPECT_TRUE(mpe::io::write_file(dir / "empty", "", mpe::io::Sync::kYes).ok());
  EXPECT_EQ(mpe::io::read_file(dir / "empty").value(), "");
}

TEST(FileIo, ReplacesAnOlderFileWhole) {
  TempDir dir;
  ASSERT_TRUE(mpe::io::write_file(dir / "r.txt", std::string(5000, 'a')).ok());
  ASSERT_TRUE(mpe::io::write_file(dir / "r.txt", "short").ok());
  EXPECT_EQ(mpe::io::read_file(dir / "r.txt").value(), "short");
}

TEST(FileIo, MissingDirectoryFailsWithPathAndStep) {
  TempDir dir;
  const std::string path = dir / "no/such/dir/out.txt";
  const Status s = mpe::io::write_file(path, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), path + ": create failed: No such file or directory");
  EXPECT_TRUE(dir.files().empty());
}

TEST(FileIo, FullDiskLeavesNoFileUnderTheName) {
  TempDir dir;
  Status s;
  {
    FileSizeLimit full(4096);
    s = mpe::io::write_file(dir / "big.txt", std::string(100000, 'y'));
  }
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), dir / "big.txt" + ": write failed: File too large");
  EXPECT_TRUE(dir.files().empty()) << "a partial file was left";
}

TEST(FileIo, FullDiskKeepsTheOlderFile) {
  TempDir dir;
  ASSERT_TRUE(mpe::io::write_file(dir / "keep.txt", "the older report\n").ok());
  Status s;
  {
    FileSizeLimit full(4096);
    s = mpe::io::write_file(dir / "keep.txt", std::string(100000, 'z'));
  }
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(mpe::io::read_file(dir / "keep.txt").value(), "the older report\n");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"keep.txt"});
}

TEST(FileIo, RenameOntoADirectoryFailsAndCleansUp) {
  TempDir dir;
  ASSERT_EQ(::mkdir((dir / "taken").c_str(), 0755), 0);
  const Status s = mpe::io::write_file(dir / "taken", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(": rename failed: "), std::string::npos) << s.message();
  EXPECT_EQ(dir.files(), std::vector<std::string>{"taken"});
  ::rmdir((dir / "taken").c_str());
}

TEST(FileIo, ReadFileNamesTheMissingPath) {
  TempDir dir;
  auto r = mpe::io::read_file(dir / "absent");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(r.status().message(), dir / "absent" + ": cannot open: No such file or directory");
}

TEST(FileIo, PositionedReadsAndWrites) {
  TempDir dir;
  const int fd = ::open((dir / "p").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(mpe::io::pwrite_all(fd, "world", 5, 6).ok());
  ASSERT_TRUE(mpe::io::pwrite_all(fd, "hello ", 6, 0).ok());
  char buf[11] = {};
  ASSERT_TRUE(mpe::io::pread_all(fd, buf, 11, 0).ok());
  EXPECT_EQ(std::string(buf, 11), "hello world");
  EXPECT_EQ(mpe::io::pread_all(fd, buf, 4, 9).code(), StatusCode::kTruncated);  // 2 of 4 bytes there
  std::string scratch;
  ASSERT_TRUE(mpe::io::copy_range(fd, 0, fd, 11, 5, &scratch).ok());
  auto all = mpe::io::read_file(dir / "p");
  EXPECT_EQ(all.value(), "hello worldhello");
  ::close(fd);
  EXPECT_EQ(mpe::io::pwrite_all(fd, "x", 1, 0).code(), StatusCode::kIoError);  // closed descriptor
}

}  // namespace
