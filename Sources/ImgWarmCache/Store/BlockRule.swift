/// Which failures enter the failed-URL list, so that later runs report the
/// URL as `blocked` without a request until `--retry-failed`.
///
/// Only a failure that the same request will meet again is remembered: an
/// HTTP 4xx other than 408 and 429, an image that does not decode, a URL
/// that cannot be requested. Everything that depends on the network or on
/// this machine is not: TLS (a missing CA bundle is fixed with `--cacert`),
/// DNS, connection, timeouts, 5xx, and the local limits (`too-large`,
/// `too-complex`, `no-decoder`), which a larger limit or an installed
/// library changes.
///
/// SDWebImage decides the same thing in SDWebImageDownloader.m,
/// `shouldBlockFailedURLWithURL:error:options:context:` (asked by
/// SDWebImageManager.m's method of the same name): in SDWebImageErrorDomain
/// it blocks only `SDWebImageErrorInvalidURL` and
/// `SDWebImageErrorBadImageData`; in NSURLErrorDomain every code except
/// not-connected, cancelled, timed-out, roaming-off, data-not-allowed,
/// cannot-find-host, cannot-connect and connection-lost. imgwarm differs in
/// two ways, both because a warm run is a batch job on a build machine and
/// not an app on a phone: it blocks HTTP 4xx (SDWebImage's
/// `SDWebImageErrorInvalidDownloadStatusCode` is not blocked, since an app
/// retries on the next screen anyway, while a CI run would request every
/// dead URL of a large manifest again on every run), and it never blocks
/// TLS failures (NSURLErrorDomain's certificate errors are blocked by
/// SDWebImage; here they are mostly the machine's CA setup, which the next
/// run may have fixed).
public enum BlockRule {
    /// `errorClass`: the report's error class name (`http-status`,
    /// `bad-image`, ...); `status`: the last HTTP status, if any.
    public static func remembers(errorClass: String, status: Int?) -> Bool {
        switch errorClass {
        case "http-status":
            guard let status, (400..<500).contains(status) else { return false }
            return status != 408 && status != 429
        case "bad-image", "invalid-url":
            return true
        default:
            // tls, network, timeout, too-large, too-complex, no-decoder,
            // insecure-redirect (a local option decides), disk, cancelled,
            // budget, and any class added later until it is named here.
            return false
        }
    }
}
