// Forgejo's dialect: a fork of Gitea with Gitea's payloads and API, which signs with
// X-Forgejo-Signature (bare hex HMAC-SHA256) and names its deliveries in X-Forgejo-Event and
// X-Forgejo-Delivery, sending the X-Gitea-* names alongside. Forgejo's own header is read
// first, so a wrong X-Forgejo-Signature is not rescued by a right X-Gitea-Signature.
#include "reconciler/clients/forge/gitea.h"

namespace tr::reconciler::forge {

const ForgeDialect& Forgejo() {
  static const GiteaDialect dialect("forgejo", {{"X-Forgejo-Event", "X-Gitea-Event"},
                                                {"X-Forgejo-Delivery", "X-Gitea-Delivery"},
                                                {"X-Forgejo-Signature", "X-Gitea-Signature"}});
  return dialect;
}

}  // namespace tr::reconciler::forge
