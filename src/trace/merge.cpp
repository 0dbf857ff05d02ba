#include "trace/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <stdexcept>

#include "trace/otf2_writer.hpp"

namespace hytask::trace {

namespace {

class json_sink final : public merge_sink {
 public:
  explicit json_sink(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "w");
    if (!f_)
      throw std::runtime_error("hytask: cannot open the merged trace '" + path +
                               "': check that its directory exists and is writable");
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    put("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hytask\",\"merged\":true},"
        "\"traceEvents\":[");
  }
  ~json_sink() override {
    if (f_) std::fclose(f_);
  }
  void begin_input(int) override {}
  void add(const event& e, int, std::int64_t, std::int64_t) override { item(e.to_json()); }
  void end_input() override {}
  void flow(std::uint64_t id, const message_end& s, const message_end& r) override {
    // Flow events (phases s and f) bind to the slices around them on their threads: the
    // sending task, and what completed the receive.
    const std::string common = "{\"name\":\"message\",\"cat\":\"mpi-flow\",\"id\":" + std::to_string(id);
    item(common + ",\"ph\":\"s\",\"ts\":" + format_us(s.ts_ns) + ",\"pid\":" + std::to_string(s.pid) +
         ",\"tid\":" + std::to_string(s.tid) + ",\"args\":{\"bytes\":" + std::to_string(s.bytes) + "}}");
    item(common + ",\"ph\":\"f\",\"bp\":\"e\",\"ts\":" + format_us(r.ts_ns) + ",\"pid\":" +
         std::to_string(r.pid) + ",\"tid\":" + std::to_string(r.tid) + "}");
  }
  void finish() override {
    put("\n]}\n");
    const bool bad = std::ferror(f_) != 0;
    const bool closed = std::fclose(f_) == 0;
    f_ = nullptr;
    if (bad || !closed) throw std::runtime_error("hytask: writing the merged trace '" + path_ + "' failed (disk full?)");
  }

 private:
  void put(std::string_view s) { std::fwrite(s.data(), 1, s.size(), f_); }
  void item(const std::string& s) {
    put(first_ ? "\n" : ",\n");
    first_ = false;
    put(s);
  }
  std::string path_;
  std::FILE* f_ = nullptr;
  bool first_ = true;
};

}  // namespace

format format_of(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".otf2") == 0 ? format::otf2 : format::json;
}

merger::merger(const std::string& output) {
  if (format_of(output) == format::otf2) sink_ = make_otf2_sink(output);
  else sink_ = std::make_unique<json_sink>(output);
}

merger::~merger() = default;

void merger::begin_input(const merge_input& in) {
  in_ = in;
  partial_.clear();
  ++stats_.inputs;
  sink_->begin_input(in.pid);
}

void merger::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const auto nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(chunk);
      return;
    }
    if (partial_.empty()) {
      line(chunk.substr(0, nl));
    } else {
      partial_.append(chunk.substr(0, nl));
      line(partial_);
      partial_.clear();
    }
    chunk.remove_prefix(nl + 1);
  }
}

void merger::end_input() {
  if (!partial_.empty()) {
    std::string last = std::move(partial_);
    partial_.clear();
    line(last);
  }
  sink_->end_input();
}

void merger::line(std::string_view l) {
  if (!parse_event(l, ev_)) return;  // the header, the end of the array
  ev_.set_field("pid", std::to_string(in_.pid));
  std::int64_t ts = 0, dur = 0;
  if (auto t = ev_.ts_ns()) {
    const std::int64_t raw_dur = ev_.dur_ns();
    ts = static_cast<std::int64_t>(corrected_ns(static_cast<double>(*t), in_.drift)) + in_.shift_ns;
    const std::int64_t end =
        static_cast<std::int64_t>(corrected_ns(static_cast<double>(*t + raw_dur), in_.drift)) + in_.shift_ns;
    dur = std::max<std::int64_t>(0, end - ts);
    if (in_.drift.measured || in_.shift_ns != 0) {
      ev_.set_field("ts", format_us(ts));
      if (ev_.field("dur")) ev_.set_field("dur", format_us(dur));
    }
  }
  ++stats_.events;
  sink_->add(ev_, in_.pid, ts, dur);
  // A message end: pair it with the other end when that one is in already.
  const auto send_seq = ev_.arg_int("send_seq");
  const auto recv_seq = send_seq ? std::nullopt : ev_.arg_int("recv_seq");
  if (!send_seq && !recv_seq) return;
  key k{ev_.text("cat"),           ev_.arg_int("comm").value_or(0), ev_.arg_int("src").value_or(-1),
        ev_.arg_int("dst").value_or(-1), ev_.arg_int("tag").value_or(-1), send_seq ? *send_seq : *recv_seq};
  const std::int64_t tid = ev_.number("tid") ? static_cast<std::int64_t>(*ev_.number("tid")) : 0;
  message_end me{ts, in_.pid, tid, ev_.arg_int("bytes").value_or(0)};
  auto& mine = send_seq ? sends_ : receives_;
  auto& theirs = send_seq ? receives_ : sends_;
  if (auto it = theirs.find(k); it != theirs.end()) {
    ++stats_.flows;
    if (send_seq) sink_->flow(stats_.flows, me, it->second);
    else sink_->flow(stats_.flows, it->second, me);
    theirs.erase(it);
  } else {
    mine.emplace(std::move(k), me);
  }
}

merge_stats merger::finish() {
  if (!finished_) {
    finished_ = true;
    stats_.unmatched_sends = sends_.size();
    stats_.unmatched_receives = receives_.size();
    sends_.clear();
    receives_.clear();
    sink_->finish();
  }
  return stats_;
}

clock_drift read_drift(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 512);
  f.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  f.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  const auto at = tail.rfind("\"clockEnd\":");
  if (at == std::string::npos) return {};
  event e;
  if (!parse_event(std::string_view(tail).substr(at + 11, tail.find('}', at) + 1 - (at + 11)), e)) {
    // not an event (no "ph"), but the fields are parsed: read them from e.fields
  }
  clock_drift d;
  for (const auto& [k, v] : e.fields) {
    if (k == "drift_ns") d.drift_ns = std::stoll(v);
    else if (k == "at_ns") d.at_ns = std::stoll(v);
  }
  d.measured = d.at_ns > 0;
  return d;
}

merge_stats merge_files(const std::vector<std::string>& inputs, const std::string& output) {
  struct one {
    std::string path;
    file_header header;
  };
  std::vector<one> files;
  std::set<int> ranks;
  bool ranks_unique = true, all_aligned = true;
  std::int64_t min_origin = 0;
  for (const std::string& p : inputs) {
    std::ifstream f(p);
    if (!f) throw std::runtime_error("hytask-trace: cannot read '" + p + "'");
    std::string first;
    std::getline(f, first);
    one o{p, parse_header(first)};
    if (!o.header.ours)
      throw std::runtime_error("hytask-trace: '" + p +
                               "' is not a trace written by hytask (HYTASK_TRACE): its first line has "
                               "no otherData.producer \"hytask\"");
    if (!o.header.rank || !ranks.insert(*o.header.rank).second) ranks_unique = false;
    all_aligned = all_aligned && o.header.aligned;
    min_origin = files.empty() ? o.header.origin_ns : std::min(min_origin, o.header.origin_ns);
    files.push_back(std::move(o));
  }
  merger m(output);
  std::vector<char> buf(1 << 20);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const one& o = files[i];
    merge_input in;
    in.pid = ranks_unique ? *o.header.rank : static_cast<int>(i);
    in.drift = read_drift(o.path);
    // Aligned files share their origin; the others are laid out by their steady-clock
    // origins, which agree when their ranks shared a machine.
    in.shift_ns = all_aligned ? 0 : o.header.origin_ns - min_origin;
    m.begin_input(in);
    std::ifstream f(o.path, std::ios::binary);
    while (f) {
      f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      m.feed(std::string_view(buf.data(), static_cast<std::size_t>(f.gcount())));
    }
    m.end_input();
  }
  return m.finish();
}

}  // namespace hytask::trace
