#include <memory>
#include <utility>

#include "global/am.hpp"
#include "global/am_rma.hpp"

namespace hytask::global::detail {

am_kind am_kind_for(hytask::global_am setting) {
  switch (setting) {
    case hytask::global_am::two_sided: return am_kind::two_sided;
    case hytask::global_am::rma: return am_kind::rma;
    case hytask::global_am::automatic: break;
  }
  return am_kind::two_sided;
}

std::unique_ptr<am_transport> make_am_transport(am_kind k, MPI_Comm parent,
                                                am_transport::receiver on_receive,
                                                am_transport::failure on_failure,
                                                std::size_t max_bytes,
                                                std::size_t rma_queue_bytes) {
  if (k == am_kind::rma)
    return std::make_unique<am_rma>(parent, std::move(on_receive), std::move(on_failure),
                                    max_bytes, rma_queue_bytes == 0 ? 4 * max_bytes : rma_queue_bytes);
  return std::make_unique<am_two_sided>(parent, std::move(on_receive), std::move(on_failure),
                                        max_bytes);
}

}  // namespace hytask::global::detail
