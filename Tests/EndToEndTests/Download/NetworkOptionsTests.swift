import Foundation
import Testing
import TestSupport

/// `warm`'s curl-named options for reaching servers: CA bundles, proxies,
/// .netrc (docs/network.md).
@Suite(.serialized) struct NetworkOptionsTests {
    /// A certificate the machine does not trust fails the entry as `tls`
    /// without blocking it: once the CA is given (flag or curl's variable),
    /// the next run fetches it.
    @Test(.needs(TestTLSServer.isAvailable, "needs nginx (with HTTP/2) and openssl: the CA test did not run"))
    func caErrorIsFetchedOnceTheCAIsGiven() throws {
        let f = try WarmFixture()
        let tls = try TestTLSServer.start()
        defer { tls.shutdown() }
        try tls.setFile("/a.png", bytes: TinyPNG.make(seed: 31))
        try tls.setFile("/b.png", bytes: TinyPNG.make(seed: 32))
        let manifest = f.writeManifest([tls.url("/a.png")])
        let report = f.dir + "/r.json"
        // No CA variables of the test's own environment count here.
        let noCA = ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]
        let first = try f.warm([manifest, "--retries", "0", "--report", report], environment: noCA)
        #expect(first.status == 1, "\(first.stderr)")
        #expect(try f.report(report).entries[0]["error"] as? String == "tls")
        #expect(first.stderr.contains("curl error 60"), "\(first.stderr)")
        let failedList = try BinaryRunner.run(["cache", "failed", "--cache", f.cache])
        #expect(failedList.stdout.isEmpty, "a TLS failure is not remembered: \(failedList.stdout)")

        let second = try f.warm([manifest, "--cacert", tls.certificatePath, "--report", report], environment: noCA)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try f.report(report).entries[0]["outcome"] as? String == "downloaded")

        // curl's variable, as the curl tool reads it; a flag wins over it.
        let viaEnv = f.writeManifest([tls.url("/b.png")], name: "b.txt")
        let third = try f.warm([viaEnv, "--report", report], environment: noCA.merging(["CURL_CA_BUNDLE": tls.certificatePath]) { $1 })
        #expect(third.status == 0, "\(third.stderr)")
        let missingFlag = try f.warm([viaEnv, "--cacert", f.dir + "/none.pem"], environment: ["CURL_CA_BUNDLE": tls.certificatePath])
        #expect(missingFlag.status == 2 && missingFlag.stderr.contains("--cacert"), "\(missingFlag.stderr)")
    }

    /// `--proxy` sends every request through the proxy; `--noproxy` and
    /// the variables as libcurl reads them (lowercase http_proxy only).
    @Test(.needsTools("python3", for: "the loopback proxy test"))
    func proxyFlagAndVariables() throws {
        let f = try WarmFixture()
        let proxy = try LoopbackProxy()
        defer { proxy.shutdown() }
        let urls = f.servePNGs(3)
        // The test machine's own settings must not decide.
        let clean = ["no_proxy": "", "NO_PROXY": "", "http_proxy": "", "HTTP_PROXY": "", "all_proxy": "", "ALL_PROXY": ""]

        let viaFlag = try f.warm([f.writeManifest([urls[0]], name: "a.txt"), "--proxy", proxy.url], environment: clean)
        #expect(viaFlag.status == 0, "\(viaFlag.stderr)")
        #expect(proxy.served() == [urls[0]])

        let bypassed = try f.warm([f.writeManifest([urls[1]], name: "b.txt"), "--proxy", proxy.url, "--noproxy", "127.0.0.1"],
                                  environment: clean)
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        #expect(proxy.served() == [urls[0]], "--noproxy: not through the proxy")
        #expect(f.server.requestCount(path: "/img/1.png") == 1)

        // Uppercase HTTP_PROXY is ignored, as curl does (httpoxy).
        let upper = try f.warm([f.writeManifest([urls[2]], name: "c.txt"), "--refresh"],
                               environment: clean.merging(["HTTP_PROXY": proxy.url]) { $1 })
        #expect(upper.status == 0, "\(upper.stderr)")
        #expect(proxy.served() == [urls[0]])
        let lower = try f.warm([f.writeManifest([urls[2]], name: "c.txt"), "--refresh"],
                               environment: clean.merging(["http_proxy": proxy.url]) { $1 })
        #expect(lower.status == 0, "\(lower.stderr)")
        #expect(proxy.served() == [urls[0], urls[2]])
    }

    /// `--netrc-file`: the credentials go to the host the file names, not
    /// to another host (not after a redirect either), and appear in no
    /// output, report or cache file.
    @Test func netrcCredentialsReachOnlyTheirHost() throws {
        let f = try WarmFixture()
        let secret = "NETRC-SECRET-7731"
        let netrc = f.dir + "/netrc"
        try "machine localhost login alice password \(secret)\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        f.server.setFile("/own.png", bytes: TinyPNG.make(seed: 41), contentType: "image/png")
        f.server.setFile("/other.png", bytes: TinyPNG.make(seed: 42), contentType: "image/png")
        f.server.setFile("/hop.png", bytes: TinyPNG.make(seed: 43), contentType: "image/png")
        let own = "http://localhost:\(f.server.port)/own.png"
        let other = f.server.url("/other.png")
        let hop = "http://localhost:\(f.server.port)/redirect-to?url=" + f.server.url("/hop.png")
        let manifest = f.writeManifest([own, other, hop])
        let report = f.dir + "/r.json", junit = f.dir + "/j.xml", metrics = f.dir + "/m.prom"
        let r = try f.warm([manifest, "--netrc-file", netrc, "-v", "--report", report, "--junit", junit, "--metrics", metrics],
                           environment: ["no_proxy": "*"])
        #expect(r.status == 0, "\(r.stderr)")
        let basic = "Basic " + Data("alice:\(secret)".utf8).base64EncodedString()
        #expect(f.server.lastRequestHeaders(path: "/own.png")?["authorization"] == basic)
        #expect(f.server.lastRequestHeaders(path: "/other.png")?["authorization"] == nil)
        #expect(f.server.lastRequestHeaders(path: "/hop.png")?["authorization"] == nil)
        var texts = [r.stdout, r.stderr]
        for file in [report, junit, metrics] { texts.append((try? String(contentsOfFile: file, encoding: .utf8)) ?? "") }
        for text in texts { #expect(!text.contains(secret) && !text.contains("alice")) }
        let walker = FileManager.default.enumerator(atPath: f.cache)
        while let name = walker?.nextObject() as? String {
            let data = FileManager.default.contents(atPath: f.cache + "/" + name) ?? Data()
            #expect(data.range(of: Data(secret.utf8)) == nil, "\(name) holds the password")
        }
    }
}
