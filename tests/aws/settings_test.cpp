// Where the AWS backend and `cppless deploy` find region, endpoint and credentials: the
// environment, the shared credentials and config files with profiles, and credential_process.
#include <cppless/aws/settings.hpp>
#include <cppless/error.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using cppless::aws::settings;

// Each test starts from an environment without AWS variables and with its own files.
class AwsSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : vars) {
      if (const char* old = std::getenv(v)) saved_.emplace_back(v, old);
      ::unsetenv(v);
    }
    char tmpl[] = "/tmp/cppless-settings.XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    ::setenv("AWS_SHARED_CREDENTIALS_FILE", (dir_ / "credentials").c_str(), 1);
    ::setenv("AWS_CONFIG_FILE", (dir_ / "config").c_str(), 1);
  }
  void TearDown() override {
    for (const char* v : vars) ::unsetenv(v);
    for (auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
    fs::remove_all(dir_);
  }
  void write(const std::string& name, const std::string& text, bool executable = false) {
    std::ofstream(dir_ / name) << text;
    if (executable) ::chmod((dir_ / name).c_str(), 0755);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static constexpr const char* vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                         "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
                                         "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_LAMBDA", "AWS_CA_BUNDLE",
                                         "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "CPPLESS_LAMBDA_ROLE"};
  fs::path dir_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(AwsSettings, EnvironmentWinsAsACompletePair) {
  write("credentials", "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n");
  ::setenv("AWS_REGION", "eu-west-1", 1);
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  EXPECT_EQ(settings::resolve().creds.access_key_id, "AKIDFILE");  // a key id alone is not a pair
  ::setenv("AWS_SECRET_ACCESS_KEY", "env-secret", 1);
  const settings s = settings::resolve();
  EXPECT_EQ(s.creds.access_key_id, "AKIDENV");
  EXPECT_EQ(s.creds.source, "environment");
  EXPECT_EQ(s.endpoint, "https://lambda.eu-west-1.amazonaws.com");
  EXPECT_EQ(s.describe().find("env-secret"), std::string::npos);
}

TEST_F(AwsSettings, NamedProfileFromBothFiles) {
  write("credentials", "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = d\n"
                       "[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = w\naws_session_token = tok\n");
  write("config", "[default]\nregion = us-east-1\n[profile work]\nregion = ap-south-1\n"
                  "endpoint_url = http://127.0.0.1:9001/\ncppless_lambda_role = arn:aws:iam::1:role/r\n"
                  "s3 =\n  max_concurrent_requests = 20\n");
  ::setenv("AWS_PROFILE", "work", 1);
  const settings s = settings::resolve();
  EXPECT_EQ(s.creds.access_key_id, "AKIDWORK");
  EXPECT_EQ(s.creds.session_token, "tok");
  EXPECT_EQ(s.region, "ap-south-1");
  EXPECT_EQ(s.endpoint, "http://127.0.0.1:9001");
  EXPECT_EQ(s.role_arn, "arn:aws:iam::1:role/r");
  ::setenv("AWS_REGION", "us-west-2", 1);
  EXPECT_EQ(settings::resolve().region, "us-west-2");
}

TEST_F(AwsSettings, MissingProfileRegionOrCredentialsAreClearErrors) {
  write("credentials", "[default]\naws_access_key_id = AKID\naws_secret_access_key = s\n");
  ::setenv("AWS_PROFILE", "nope", 1);
  try {
    (void)settings::resolve();
    FAIL() << "resolved a profile that does not exist";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("profile 'nope'"), std::string::npos) << e.what();
  }
  ::unsetenv("AWS_PROFILE");
  try {
    (void)settings::resolve();
    FAIL() << "resolved without a region";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("no region"), std::string::npos) << e.what();
  }
  write("credentials", "");
  ::setenv("AWS_REGION", "us-east-1", 1);
  EXPECT_THROW((void)settings::resolve(), cppless::error);
}

TEST_F(AwsSettings, CredentialProcessSuppliesTemporaryCredentials) {
  write("helper.sh",
        "#!/bin/sh\n"
        "[ \"$1\" = \"--role\" ] && [ \"$2\" = \"dev ops\" ] || { echo \"bad arguments: $*\" >&2; exit 3; }\n"
        "echo '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", \"SecretAccessKey\": \"proc-secret\", "
        "\"SessionToken\": \"proc-token\", \"Expiration\": \"2030-01-01T00:00:00Z\"}'\n",
        true);
  write("config", "[profile dev]\nregion = us-east-1\ncredential_process = " + path("helper.sh") +
                      " --role \"dev ops\"\n");
  ::setenv("AWS_PROFILE", "dev", 1);
  const settings s = settings::resolve();
  EXPECT_EQ(s.creds.access_key_id, "ASIAPROC");
  EXPECT_EQ(s.creds.secret_access_key, "proc-secret");
  EXPECT_EQ(s.creds.session_token, "proc-token");
  EXPECT_EQ(s.creds.expiration, "2030-01-01T00:00:00Z");
  EXPECT_NE(s.creds.source.find("credential_process"), std::string::npos);
  // Keys in the credentials file come first, as with the SDKs.
  write("credentials", "[dev]\naws_access_key_id = AKIDSTATIC\naws_secret_access_key = s\n");
  EXPECT_EQ(settings::resolve().creds.access_key_id, "AKIDSTATIC");
}

TEST_F(AwsSettings, CredentialProcessFailuresNameTheCommandNotTheSecret) {
  ::setenv("AWS_REGION", "us-east-1", 1);
  auto message = [] {
    try {
      (void)settings::resolve();
    } catch (const cppless::error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  write("fails.sh", "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"leaked\"}'\n"
                    "echo 'token expired, run sso login' >&2\nexit 2\n",
        true);
  write("config", "[default]\ncredential_process = " + path("fails.sh") + "\n");
  std::string m = message();
  EXPECT_NE(m.find("exit status 2"), std::string::npos) << m;
  EXPECT_EQ(m.find("token expired"), std::string::npos) << m;  // stderr may hold secrets: not quoted
  EXPECT_NE(m.find("bytes on stderr"), std::string::npos) << m;
  EXPECT_EQ(m.find("leaked"), std::string::npos) << m;

  write("config", "[default]\ncredential_process = " + path("does-not-exist") + "\n");
  m = message();
  EXPECT_NE(m.find("could not be started"), std::string::npos) << m;

  write("garbage.sh", "#!/bin/sh\necho 'not json'\n", true);
  write("config", "[default]\ncredential_process = " + path("garbage.sh") + "\n");
  EXPECT_NE(message().find("JSON"), std::string::npos);

  write("v2.sh", "#!/bin/sh\necho '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}'\n", true);
  write("config", "[default]\ncredential_process = " + path("v2.sh") + "\n");
  EXPECT_NE(message().find("Version"), std::string::npos);

  // An unmatched quote: the command line (which may carry a token) is not echoed.
  write("config", "[default]\ncredential_process = helper --token s3cr3t-token 'unterminated\n");
  m = message();
  EXPECT_NE(m.find("unmatched"), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cr3t-token"), std::string::npos) << m;

  // A helper that never finishes (a login prompt nobody answers) is stopped.
  write("hangs.sh", "#!/bin/sh\nexec sleep 600\n", true);
  write("config", "[default]\ncredential_process = " + path("hangs.sh") + "\n");
  ::setenv("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S", "1", 1);
  m = message();
  ::unsetenv("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S");
  EXPECT_NE(m.find("did not finish within 1 s"), std::string::npos) << m;
  // A malformed limit is refused like the other overrides, not silently replaced by 60 s.
  ::setenv("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S", "soon", 1);
  m = message();
  ::unsetenv("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S");
  EXPECT_NE(m.find("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S='soon'"), std::string::npos) << m;
}

// Where libcurl's compiled-in CA bundle is missing (a Debian build on Amazon Linux 2023), the
// first bundle that exists among the distributions' places is used.
TEST_F(AwsSettings, CaBundleFallsBackToWhereTheSystemKeepsIt) {
  write("al2023.pem", "pem");
  const std::string present = path("al2023.pem"), missing = path("debian.pem");
  const char* const candidates[] = {missing.c_str(), present.c_str()};
  EXPECT_EQ(cppless::aws::fallback_ca_bundle(missing.c_str(), candidates), present);
  EXPECT_EQ(cppless::aws::fallback_ca_bundle(present.c_str(), candidates), "");  // libcurl's own exists
  const char* const none[] = {missing.c_str()};
  EXPECT_EQ(cppless::aws::fallback_ca_bundle(nullptr, none), "");
  bool lists_al2023 = false;
  for (const char* p : cppless::aws::system_ca_bundles) lists_al2023 |= std::string(p).rfind("/etc/pki/", 0) == 0;
  EXPECT_TRUE(lists_al2023);
}

}  // namespace
