#include <stdexcept>
#include <string>
#include <utility>

#include "global/am.hpp"

namespace hytask::global::detail {

namespace {
constexpr int am_tag = 1;
}

am_two_sided::am_two_sided(MPI_Comm parent, receiver on_receive, std::size_t max_bytes,
                           int preposted)
    : on_receive_(std::move(on_receive)), max_bytes_(max_bytes) {
  check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup", -1);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  recv_bufs_.resize(static_cast<std::size_t>(preposted < 1 ? 1 : preposted));
  recv_reqs_.assign(recv_bufs_.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < recv_bufs_.size(); ++i) {
    recv_bufs_[i].resize(max_bytes_);
    post_receive(i);
  }
}

void am_two_sided::post_receive(std::size_t i) {
  check(MPI_Irecv(recv_bufs_[i].data(), static_cast<int>(max_bytes_), MPI_BYTE, MPI_ANY_SOURCE,
                  am_tag, comm_, &recv_reqs_[i]),
        "MPI_Irecv", -1);
}

am_two_sided::~am_two_sided() {
  std::lock_guard lk(poll_mu_);
  if (!send_reqs_.empty())
    MPI_Waitall(static_cast<int>(send_reqs_.size()), send_reqs_.data(), MPI_STATUSES_IGNORE);
  for (MPI_Request& r : recv_reqs_) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  for (round& r : rounds_)
    if (r.req != MPI_REQUEST_NULL) MPI_Wait(&r.req, MPI_STATUS_IGNORE);
  MPI_Comm_free(&comm_);
}

void am_two_sided::check(int rc, const char* call, int peer) const {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string("hytask: global dependencies' messages: ") + call +
                           (peer >= 0 ? " with rank " + std::to_string(peer) : std::string()) +
                           " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

void am_two_sided::send(int dest, std::vector<std::byte> buf) {
  if (buf.size() > max_bytes_)
    throw std::logic_error("hytask: internal error: a global-dependency message of " +
                           std::to_string(buf.size()) + " bytes exceeds the receivers' " +
                           std::to_string(max_bytes_));
  std::lock_guard lk(queue_mu_);
  queued_.push_back({dest, std::move(buf)});
}

void am_two_sided::complete_round(std::vector<std::uint64_t> counts, round_done done) {
  std::lock_guard lk(queue_mu_);
  rounds_.push_back(round{std::move(counts), {}, std::move(done)});
}

bool am_two_sided::poll() {
  std::unique_lock poller(poll_mu_, std::try_to_lock);
  if (!poller.owns_lock()) return false;
  bool progressed = false;
  for (;;) {
    // Post what was queued (the receiver may queue more below: loop).
    std::vector<outgoing> q;
    {
      std::lock_guard lk(queue_mu_);
      q.swap(queued_);
    }
    for (outgoing& o : q) {
      MPI_Request r;
      check(MPI_Isend(o.buf.data(), static_cast<int>(o.buf.size()), MPI_BYTE, o.dest, am_tag,
                      comm_, &r),
            "MPI_Isend", o.dest);
      send_bufs_.push_back(std::move(o.buf));
      send_reqs_.push_back(r);
      progressed = true;
    }
    if (!send_reqs_.empty()) {
      int n = 0;
      indices_.resize(send_reqs_.size());
      check(MPI_Testsome(static_cast<int>(send_reqs_.size()), send_reqs_.data(), &n,
                         indices_.data(), MPI_STATUSES_IGNORE),
            "MPI_Testsome (sends)", -1);
      if (n > 0 && n != MPI_UNDEFINED) {
        progressed = true;
        std::size_t keep = 0;
        for (std::size_t i = 0; i < send_reqs_.size(); ++i) {
          if (send_reqs_[i] == MPI_REQUEST_NULL) continue;
          if (keep != i) {  // a vector moved onto itself would be emptied under the send
            send_reqs_[keep] = send_reqs_[i];
            send_bufs_[keep] = std::move(send_bufs_[i]);
          }
          ++keep;
        }
        send_reqs_.resize(keep);
        send_bufs_.resize(keep);
      }
    }
    // Receives: hand each to the receiver, then post its buffer again.
    int n = 0;
    indices_.resize(recv_reqs_.size());
    statuses_.resize(recv_reqs_.size());
    check(MPI_Testsome(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), &n,
                       indices_.data(), statuses_.data()),
          "MPI_Testsome (receives)", -1);
    if (n == MPI_UNDEFINED) n = 0;
    for (int k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(indices_[static_cast<std::size_t>(k)]);
      const MPI_Status& st = statuses_[static_cast<std::size_t>(k)];
      int bytes = 0;
      MPI_Get_count(&st, MPI_BYTE, &bytes);
      // Handed over in place, and posted again once the receiver is done with it.
      const std::span<const std::byte> buf(recv_bufs_[i].data(), static_cast<std::size_t>(bytes));
      try {
        on_receive_(st.MPI_SOURCE, buf);
      } catch (...) {
        post_receive(i);
        throw;
      }
      post_receive(i);
    }
    progressed |= n > 0;

    // Rounds, in order.
    bool round_moved = false;
    for (;;) {
      round* r;
      {
        std::lock_guard lk(queue_mu_);
        if (rounds_.empty()) break;
        r = &rounds_.front();  // only the poller pops, and deque keeps it in place
      }
      if (!r->posted) {
        r->counts.resize(static_cast<std::size_t>(size_), 0);
        r->incoming.assign(static_cast<std::size_t>(size_), 0);
        check(MPI_Ialltoall(r->counts.data(), 1, MPI_UINT64_T, r->incoming.data(), 1,
                            MPI_UINT64_T, comm_, &r->req),
              "MPI_Ialltoall", -1);
        r->posted = true;
      }
      int flag = 0;
      check(MPI_Test(&r->req, &flag, MPI_STATUS_IGNORE), "MPI_Test (round)", -1);
      if (!flag) break;
      std::uint64_t sum = 0;
      for (std::uint64_t c : r->incoming) sum += c;
      round_done done = std::move(r->done);
      {
        std::lock_guard lk(queue_mu_);
        rounds_.pop_front();
      }
      done(sum);
      round_moved = true;
    }
    progressed |= round_moved;
    bool more;
    {
      std::lock_guard lk(queue_mu_);
      more = !queued_.empty();
    }
    if (!more && !round_moved) break;
  }
  return progressed;
}

}  // namespace hytask::global::detail
