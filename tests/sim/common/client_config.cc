#include "tests/sim/common/client_config.h"

#include "yaml-cpp/yaml.h"

namespace tr::sim {

std::string RenderTalosconfig(const std::string& context, const std::vector<std::string>& endpoints,
                              const std::string& ca_pem, const CertifiedKey& client) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "context" << YAML::Value << context;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << context << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "endpoints" << YAML::Value << YAML::BeginSeq;
  for (const auto& e : endpoints) out << e;
  out << YAML::EndSeq;
  out << YAML::Key << "ca" << YAML::Value << Base64(ca_pem);
  out << YAML::Key << "crt" << YAML::Value << Base64(client.cert_pem);
  out << YAML::Key << "key" << YAML::Value << Base64(TalosKeyPem(client.key_pem));
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string RenderKubeconfig(const std::string& cluster, const std::string& server_url,
                             const std::string& ca_pem, const std::string& token) {
  const std::string user = "admin@" + cluster;
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << cluster;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << server_url;
  out << YAML::Key << "certificate-authority-data" << YAML::Value << Base64(ca_pem);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << user;
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "token" << YAML::Value << token;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << user;
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << cluster;
  out << YAML::Key << "namespace" << YAML::Value << "default";
  out << YAML::Key << "user" << YAML::Value << user;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << user;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace tr::sim
