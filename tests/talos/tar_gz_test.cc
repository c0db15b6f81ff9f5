#include "reconciler/clients/talos/tar_gz.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>

#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

// One tar entry: a 512-byte ustar header and the padded body.
std::string TarEntry(const std::string& name, const std::string& body, char type = '0') {
  std::string header(512, '\0');
  std::memcpy(header.data(), name.data(), std::min<size_t>(name.size(), 100));
  const std::string size = fmt::format("{:011o}", body.size());
  std::memcpy(header.data() + 124, size.data(), size.size());
  header[156] = type;
  std::memcpy(header.data() + 257, "ustar", 5);
  std::string padded = body;
  padded.resize((body.size() + 511) / 512 * 512, '\0');
  return header + padded;
}

std::string Gzip(const std::string& data) {
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  EXPECT_EQ(deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, data.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string EndOfArchive() { return std::string(1024, '\0'); }

TEST(TarGzTest, ExtractsTheKubeconfigFile) {
  const std::string kubeconfig = "apiVersion: v1\nkind: Config\n";
  const std::string archive =
      Gzip(TarEntry("README", "other") + TarEntry("kubeconfig", kubeconfig) + EndOfArchive());
  auto content = ExtractFileFromTarGz(archive, "kubeconfig");
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, kubeconfig);
}

TEST(TarGzTest, MatchesDotSlashAndPaxPaths) {
  EXPECT_EQ(
      *ExtractFileFromTarGz(Gzip(TarEntry("./kubeconfig", "a") + EndOfArchive()), "kubeconfig"),
      "a");
  const std::string record = "19 path=kubeconfig\n";
  const std::string archive =
      Gzip(TarEntry("PaxHeader", record, 'x') + TarEntry("truncated-nam", "b") + EndOfArchive());
  EXPECT_EQ(*ExtractFileFromTarGz(archive, "kubeconfig"), "b");
}

TEST(TarGzTest, SkipsDirectoriesAndReportsMissingFile) {
  const std::string archive = Gzip(TarEntry("kubeconfig", "", '5') + EndOfArchive());
  EXPECT_EQ(ExtractFileFromTarGz(archive, "kubeconfig").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TarGzTest, RejectsMalformedInput) {
  EXPECT_EQ(ExtractFileFromTarGz("not gzip", "kubeconfig").status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string whole = Gzip(TarEntry("kubeconfig", "abc") + EndOfArchive());
  EXPECT_EQ(ExtractFileFromTarGz(whole.substr(0, whole.size() / 2), "kubeconfig").status().code(),
            absl::StatusCode::kInvalidArgument);
  std::string truncated_tar = TarEntry("kubeconfig", std::string(2000, 'x'));
  truncated_tar.resize(1024);
  EXPECT_EQ(ExtractFileFromTarGz(Gzip(truncated_tar), "kubeconfig").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TarGzTest, CapsDecompressedSize) {
  const std::string big(1 << 20, 'z');
  EXPECT_EQ(Gunzip(Gzip(big), 1000).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gunzip(Gzip(big))->size(), big.size());
}

}  // namespace
}  // namespace tr::reconciler::talos
