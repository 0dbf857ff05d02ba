#include "trace/otf2_writer.hpp"

#include <stdexcept>

#include "trace/merge.hpp"

#ifdef HYTASK_HAVE_OTF2

#include <otf2/otf2.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

namespace hytask::trace {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks g_flush = {pre_flush, post_flush};

void check(OTF2_ErrorCode rc, const char* what, const std::string& path) {
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(std::string("hytask: writing the OTF2 trace '") + path + "' failed in " + what +
                             ": " + OTF2_Error_GetDescription(rc));
}

class otf2_sink final : public merge_sink {
 public:
  explicit otf2_sink(const std::string& path) : path_(path) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    const std::string name = p.stem().string();
    // OTF2 refuses an archive that exists: a new run replaces the old one.
    std::error_code ec;
    fs::remove_all(fs::path(dir) / name, ec);
    fs::remove(fs::path(dir) / (name + ".def"), ec);
    fs::remove(p, ec);
    archive_ = OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024,
                                 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive_)
      throw std::runtime_error("hytask: cannot create the OTF2 trace '" + path +
                               "': check that its directory exists and is writable");
    check(OTF2_Archive_SetFlushCallbacks(archive_, &g_flush, nullptr), "SetFlushCallbacks", path_);
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_), "SetSerialCollectiveCallbacks", path_);
    check(OTF2_Archive_OpenEvtFiles(archive_), "OpenEvtFiles", path_);
  }
  ~otf2_sink() override {
    if (archive_) OTF2_Archive_Close(archive_);
  }

  void begin_input(int pid) override {
    pid_ = pid;
    threads_.clear();
    process_name_ = "rank " + std::to_string(pid);
  }

  void add(const event& e, int, std::int64_t ts, std::int64_t dur) override {
    const std::string ph = e.text("ph");
    const auto tid_d = e.number("tid");
    const std::int64_t tid = tid_d ? static_cast<std::int64_t>(*tid_d) : 0;
    if (ph == "M") {
      const std::string what = e.text("name");
      if (what == "thread_name") threads_[tid].name = e.arg_text("name");
      else if (what == "process_name") process_name_ = e.arg_text("name");
      return;
    }
    if (ph != "X" && ph != "i") return;
    if (ts < 0) ts = 0;
    item it;
    it.t0 = static_cast<std::uint64_t>(ts);
    it.t1 = it.t0 + static_cast<std::uint64_t>(ph == "X" ? dur : 0);
    const std::string cat = e.text("cat");
    it.region = region(e.text("name"), cat);
    if (auto s = e.arg_int("send_seq")) {
      it.mpi = 1;
      it.peer = e.arg_int("dst").value_or(-1);
    } else if (auto r = e.arg_int("recv_seq")) {
      it.mpi = 2;
      it.peer = e.arg_int("src").value_or(-1);
    }
    it.tag = e.arg_int("tag").value_or(0);
    it.bytes = e.arg_int("bytes").value_or(0);
    it.order = threads_[tid].items.size();
    threads_[tid].items.push_back(it);
    first_ = std::min(first_, it.t0);
    last_ = std::max(last_, it.t1);
  }

  // The rank's events, thread by thread in time order, properly nested: an interval that
  // outlasts the one it started in is cut at that one's end (OTF2 requires nesting).
  void end_input() override {
    for (auto& [tid, th] : threads_) {
      auto& v = th.items;
      std::sort(v.begin(), v.end(), [](const item& a, const item& b) {
        if (a.t0 != b.t0) return a.t0 < b.t0;
        if (a.t1 != b.t1) return a.t1 > b.t1;
        return a.order < b.order;
      });
      const OTF2_LocationRef loc = locations_.size();
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive_, loc);
      if (!w) throw std::runtime_error("hytask: writing the OTF2 trace '" + path_ + "' failed: no event writer");
      std::uint64_t n = 0;
      std::vector<item> stack;
      auto leave_until = [&](std::uint64_t t, bool all) {
        while (!stack.empty() && (all || stack.back().t1 <= t)) {
          check(OTF2_EvtWriter_Leave(w, nullptr, stack.back().t1, stack.back().region), "Leave", path_);
          ++n;
          stack.pop_back();
        }
      };
      for (item it : v) {
        leave_until(it.t0, false);
        if (!stack.empty()) it.t1 = std::min(it.t1, stack.back().t1);
        check(OTF2_EvtWriter_Enter(w, nullptr, it.t0, it.region), "Enter", path_);
        ++n;
        if (it.mpi == 1 && it.peer >= 0) {
          check(OTF2_EvtWriter_MpiSend(w, nullptr, it.t0, static_cast<std::uint32_t>(it.peer), 0,
                                       static_cast<std::uint32_t>(it.tag), static_cast<std::uint64_t>(it.bytes)),
                "MpiSend", path_);
          ++n;
        } else if (it.mpi == 2 && it.peer >= 0) {
          check(OTF2_EvtWriter_MpiRecv(w, nullptr, it.t0, static_cast<std::uint32_t>(it.peer), 0,
                                       static_cast<std::uint32_t>(it.tag), static_cast<std::uint64_t>(it.bytes)),
                "MpiRecv", path_);
          ++n;
        }
        stack.push_back(it);
      }
      leave_until(0, true);
      check(OTF2_Archive_CloseEvtWriter(archive_, w), "CloseEvtWriter", path_);
      std::string name = th.name.empty() ? "thread " + std::to_string(tid) : th.name;
      locations_.push_back({loc, pid_, std::move(name), n});
    }
    groups_[pid_] = process_name_;
    threads_.clear();
  }

  void flow(std::uint64_t, const message_end&, const message_end&) override {}  // MpiSend/MpiRecv pair

  void finish() override {
    check(OTF2_Archive_CloseEvtFiles(archive_), "CloseEvtFiles", path_);
    check(OTF2_Archive_OpenDefFiles(archive_), "OpenDefFiles", path_);
    for (const auto& l : locations_) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive_, l.ref);
      check(OTF2_Archive_CloseDefWriter(archive_, d), "CloseDefWriter", path_);
    }
    check(OTF2_Archive_CloseDefFiles(archive_), "CloseDefFiles", path_);
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    if (!g) throw std::runtime_error("hytask: writing the OTF2 trace '" + path_ + "' failed: no definition writer");
    if (first_ > last_) first_ = last_ = 0;
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, first_, last_ - first_ + 1, OTF2_UNDEFINED_TIMESTAMP),
          "WriteClockProperties", path_);
    std::map<std::string, OTF2_StringRef> strings;
    auto str = [&](const std::string& s) {
      auto [it, fresh] = strings.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
      if (fresh) check(OTF2_GlobalDefWriter_WriteString(g, it->second, s.c_str()), "WriteString", path_);
      return it->second;
    };
    const OTF2_StringRef empty = str("");
    for (const auto& r : regions_) {
      const bool mpi = r.cat == "mpi" || r.cat == "mpi-runtime";
      check(OTF2_GlobalDefWriter_WriteRegion(g, r.ref, str(r.name), str(r.name), str(r.cat),
                                             r.cat == "task" ? OTF2_REGION_ROLE_TASK : OTF2_REGION_ROLE_FUNCTION,
                                             mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                             empty, 0, 0),
            "WriteRegion", path_);
    }
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("machine"), str("machine"),
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "WriteSystemTreeNode", path_);
    // Ranks are location groups numbered by rank; MPI's ranks index them in that order.
    std::vector<std::uint64_t> rank_locations, ranks;
    for (const auto& [pid, name] : groups_) {
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(pid), str(name),
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                    OTF2_UNDEFINED_LOCATION_GROUP),
            "WriteLocationGroup", path_);
      std::uint64_t first_loc = OTF2_UNDEFINED_LOCATION;
      for (const auto& l : locations_)
        if (l.pid == pid) first_loc = std::min<std::uint64_t>(first_loc, l.ref);
      rank_locations.push_back(first_loc);
      ranks.push_back(ranks.size());
    }
    for (const auto& l : locations_)
      check(OTF2_GlobalDefWriter_WriteLocation(g, l.ref, str(l.name), OTF2_LOCATION_TYPE_CPU_THREAD, l.events,
                                               static_cast<OTF2_LocationGroupRef>(l.pid)),
            "WriteLocation", path_);
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, str("MPI locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                          static_cast<std::uint32_t>(rank_locations.size()), rank_locations.data()),
          "WriteGroup", path_);
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, str("MPI_COMM_WORLD ranks"), OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                          static_cast<std::uint32_t>(ranks.size()), ranks.data()),
          "WriteGroup", path_);
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, str("MPI_COMM_WORLD"), 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "WriteComm", path_);
    check(OTF2_Archive_CloseGlobalDefWriter(archive_, g), "CloseGlobalDefWriter", path_);
    const OTF2_ErrorCode rc = OTF2_Archive_Close(archive_);
    archive_ = nullptr;
    check(rc, "Close", path_);
  }

 private:
  struct item {
    std::uint64_t t0 = 0, t1 = 0;
    OTF2_RegionRef region = 0;
    int mpi = 0;  // 1 send, 2 receive
    std::int64_t peer = -1, tag = 0, bytes = 0;
    std::size_t order = 0;
  };
  struct thread {
    std::string name;
    std::vector<item> items;
  };
  struct region_def {
    OTF2_RegionRef ref;
    std::string name, cat;
  };
  struct location {
    OTF2_LocationRef ref;
    int pid;
    std::string name;
    std::uint64_t events;
  };
  OTF2_RegionRef region(const std::string& name, const std::string& cat) {
    auto [it, fresh] = region_ids_.emplace(cat + '\n' + name, static_cast<OTF2_RegionRef>(regions_.size()));
    if (fresh) regions_.push_back({it->second, name, cat});
    return it->second;
  }

  std::string path_;
  OTF2_Archive* archive_ = nullptr;
  int pid_ = 0;
  std::string process_name_;
  std::map<std::int64_t, thread> threads_;  // the current rank's
  std::map<std::string, OTF2_RegionRef> region_ids_;
  std::vector<region_def> regions_;
  std::vector<location> locations_;
  std::map<int, std::string> groups_;
  std::uint64_t first_ = UINT64_MAX, last_ = 0;
};

}  // namespace

bool otf2_available() noexcept { return true; }

std::unique_ptr<merge_sink> make_otf2_sink(const std::string& path) { return std::make_unique<otf2_sink>(path); }

}  // namespace hytask::trace

#else

namespace hytask::trace {

bool otf2_available() noexcept { return false; }

std::unique_ptr<merge_sink> make_otf2_sink(const std::string& path) {
  throw std::runtime_error("hytask: cannot write the OTF2 trace '" + path +
                           "': this hytask was built without the OTF2 library. Install it (Debian: "
                           "libotf2-trace-dev) and configure hytask again, or name a .json file for a "
                           "Chrome/Perfetto trace");
}

}  // namespace hytask::trace

#endif
