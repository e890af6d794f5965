import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The curl tool's CA and .netrc rules (curl/curl, src/tool_operate.c: the
/// CA set-up reads CURL_CA_BUNDLE, else SSL_CERT_DIR and SSL_CERT_FILE, only
/// when neither --cacert nor --capath is given; CURLOPT_NETRC is
/// CURL_NETRC_OPTIONAL for --netrc-optional, CURL_NETRC_REQUIRED for --netrc
/// or --netrc-file).
@Suite struct CurlTransportOptionsTests {
    struct CACase: Sendable, CustomTestStringConvertible {
        var cacert: String? = nil
        var capath: String? = nil
        var env: [String: String] = [:]
        var file: String?
        var path: String?
        var testDescription: String { "\(cacert ?? "-") \(capath ?? "-") \(env.keys.sorted())" }
    }

    @Test(arguments: [
        CACase(file: nil, path: nil),
        CACase(env: ["CURL_CA_BUNDLE": "/b.pem"], file: "/b.pem", path: nil),
        CACase(env: ["SSL_CERT_FILE": "/f.pem"], file: "/f.pem", path: nil),
        CACase(env: ["SSL_CERT_DIR": "/d"], file: nil, path: "/d"),
        CACase(env: ["SSL_CERT_FILE": "/f.pem", "SSL_CERT_DIR": "/d"], file: "/f.pem", path: "/d"),
        // CURL_CA_BUNDLE wins, and then SSL_CERT_DIR is not read.
        CACase(env: ["CURL_CA_BUNDLE": "/b.pem", "SSL_CERT_FILE": "/f.pem", "SSL_CERT_DIR": "/d"], file: "/b.pem", path: nil),
        // A flag wins over every variable.
        CACase(cacert: "/flag.pem", env: ["CURL_CA_BUNDLE": "/b.pem", "SSL_CERT_DIR": "/d"], file: "/flag.pem", path: nil),
        CACase(capath: "/flagdir", env: ["CURL_CA_BUNDLE": "/b.pem", "SSL_CERT_FILE": "/f.pem"], file: nil, path: "/flagdir"),
        CACase(cacert: "/flag.pem", capath: "/flagdir", file: "/flag.pem", path: "/flagdir"),
        // Empty variables count as unset.
        CACase(env: ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "/f.pem"], file: "/f.pem", path: nil),
    ])
    func certificateAuthorities(_ c: CACase) {
        let r = CurlTransportOptions.certificateAuthorities(cacert: c.cacert, capath: c.capath, environment: c.env)
        #expect(r.file == c.file && r.path == c.path)
    }

    @Test(arguments: [
        (false, false, nil, NetrcUse.ignored),
        (true, false, nil, .required),
        (false, true, nil, .optional),
        (false, false, "/n", .required),
        (true, true, "/n", .optional),
    ] as [(Bool, Bool, String?, NetrcUse)])
    func netrc(_ netrc: Bool, _ optional: Bool, _ file: String?, _ expected: NetrcUse) {
        #expect(CurlTransportOptions.netrc(netrc: netrc, optional: optional, file: file) == expected)
    }
}
