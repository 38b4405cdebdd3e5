// Deployment packages through S3: Lambda takes at most 50 MB of zip in the request itself
// (CreateFunction / UpdateFunctionCode with ZipFile); a larger package, up to Lambda's 250 MB
// unzipped, must be uploaded to an S3 bucket in the function's region first and named in the
// request instead. PutObject is SigV4-signed by libcurl (service "s3", the payload's SHA-256 in
// x-amz-content-sha256, as S3 requires). Keys are content-addressed, so a package already
// uploaded (same bytes) is not sent again.
#pragma once

#include <cppless/aws/settings.hpp>

#include <string>

namespace cppless::tools {

struct s3_object {
  std::string bucket, key;
};

// The S3 endpoint: AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL (both path-style, for local
// servers), else https://<bucket>.s3.<region>.amazonaws.com (virtual-hosted, as new buckets need).
std::string s3_object_url(const aws::settings& s, const s3_object& object);

// Uploads `zip` to s3://bucket/cppless/<prefix>/<sha256>.zip unless that object exists already.
// Throws with S3's error code and message (never the request, which carries the signature).
s3_object upload_package(const aws::settings& s, const std::string& bucket, const std::string& prefix,
                         const std::string& zip);

}  // namespace cppless::tools
