// notify-previews: prints the generated section of docs/notifications.md, a text preview and
// the body of the sample notification in every format (preview.h). scripts/docs-notify-previews
// writes it into the page.
#include <iostream>

#include "tests/notify_preview/preview.h"

int main() {
  std::cout << tr::notify_preview::PreviewSection();
  return 0;
}
