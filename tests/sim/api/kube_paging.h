// Chunked lists of the fake Kubernetes API (`limit` and `continue`), as the API server answers
// them from etcd: items in key order (namespace/name), a page of at most `limit` items whose
// metadata.continue (opaque: base64url of {"v","rv","start"}) resumes after the page's last key
// in the same snapshot; `remainingItemCount` when no selector filtered the list. A token whose
// snapshot is no longer held answers 410 Expired, a token that does not decode 400 BadRequest.
// A list without `limit` or `continue` keeps the order it was built in.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "nlohmann/json.hpp"

namespace httplib {
struct Request;
}

namespace tr::sim {

class ListPager {
 public:
  struct Page {
    int code = 200;          // 200, or the refusal's code
    nlohmann::json items;    // the page (or the refusal's Status when code != 200)
    nlohmann::json metadata; // the list's metadata: resourceVersion, continue, remainingItemCount
  };

  // The page `req` asks for of `items` (every item of the list, selectors applied) at `rv`.
  Page Take(const httplib::Request& req, nlohmann::json items, uint64_t rv);

 private:
  struct Snapshot {
    std::string key;  // rv and the request's path and selectors
    uint64_t rv = 0;
    std::shared_ptr<const nlohmann::json> items;  // sorted by key
  };
  std::mutex mu_;
  std::deque<Snapshot> snapshots_;  // the newest few
};

}  // namespace tr::sim
