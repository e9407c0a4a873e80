// upshot's figures: writes an `mpe synth` log, then runs `upshot --bench` on it several times at
// 1920x1080 and prints the medians of what it reports:
//   start_to_first_frame_ms   process start (kernel's clock) to the index preview painted;
//   full_load_ms              decoding every chunk into the model, on all cores;
//   frame_*_ms / *_cpu_ms     painting one frame (median of 15), wall and painting-thread CPU:
//                             full view, a 1 ms window mid-run, and the whole run with 8-px rows
//                             scrolled to the middle (what the window shows for many ranks);
//   peak_rss_bytes_per_record peak RSS (VmHWM) minus the RSS before the file was opened, per record;
//   model_bytes_per_record    the model's arrays by capacity, per record.
// --keep leaves the log in place (and reuses it if it exists).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string ranks = "64", events = "10000000", file = "bench_upshot.mpelog";
  int runs = 5;
  bool keep = false;
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--keep") {
      keep = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) a.clear();
    if (a == "--ranks")
      ranks = argv[i + 1];
    else if (a == "--events")
      events = argv[i + 1];
    else if (a == "--file")
      file = argv[i + 1];
    else if (a == "--runs")
      runs = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: bench_upshot [--ranks R] [--events N] [--file F] [--runs K] [--keep]\n");
      return 2;
    }
  }
  const std::string synth =
      std::string(MPE_EXE) + " synth --ranks " + ranks + " --events " + events + " " + file;
  FILE* existing = keep ? std::fopen(file.c_str(), "rb") : nullptr;
  if (existing) {
    std::fclose(existing);
    std::printf("reusing %s\n", file.c_str());
  } else {
    std::printf("$ %s\n", synth.c_str());
    if (std::system(synth.c_str()) != 0) return 1;
  }
  std::map<std::string, std::vector<double>> values;
  const std::string cmd =
      std::string("QT_QPA_PLATFORM=offscreen ") + UPSHOT_EXE + " --bench --size 1920x1080 " + file;
  std::printf("$ %s   (x%d)\n", cmd.c_str(), runs);
  for (int r = 0; r < runs; ++r) {
    FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
    if (!p) return 1;
    char key[128];
    double v;
    char line[512];
    while (std::fgets(line, sizeof line, p))
      if (std::sscanf(line, "%127s %lf", key, &v) == 2) values[key].push_back(v);
    if (pclose(p) != 0) return 1;
  }
  std::printf("median of %d runs, %s ranks, %s events requested:\n", runs, ranks.c_str(), events.c_str());
  for (auto& [k, v] : values) {
    std::sort(v.begin(), v.end());
    std::printf("  %-34s %12.2f   (min %.2f, max %.2f)\n", k.c_str(), v[v.size() / 2], v.front(), v.back());
  }
  if (!keep) std::remove(file.c_str());
  return 0;
}
