import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// docs/cli-contract.md: "TLS certificates are verified unless `--insecure`."
@Suite(.serialized) struct TLSTests {
    /// A loopback HTTPS server (python3's http.server wrapped in ssl) with
    /// a self-signed certificate made for this test. It prints its port and
    /// exits by itself after `lifetime` seconds, so a failed test can't
    /// leave it running.
    static let serverScript = """
    import http.server, ssl, sys, threading, os
    root, cert, key, lifetime = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    os.chdir(root)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    threading.Timer(lifetime, httpd.shutdown).start()
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()
    """

    @Test(.needsTools("openssl", "python3", for: "the HTTPS server of the TLS test"))
    func selfSignedCertificateIsRefusedByDefaultAndAcceptedWithInsecure() throws {
        let openssl = try neededTool("openssl", for: "the test certificate")
        let python = try neededTool("python3", for: "the HTTPS server")
        let dir = makeTempDirectory("imgwarm-tls")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cert = dir + "/cert.pem", key = dir + "/key.pem"
        let made = runTool(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                     "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        try #require(made?.status == 0, "openssl: \(made?.output ?? "")")
        let root = dir + "/www"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let image = TinyPNG.make(width: 7, height: 5, seed: 443)
        FileManager.default.createFile(atPath: root + "/a.png", contents: Data(image))
        FileManager.default.createFile(atPath: dir + "/serve.py", contents: Data(Self.serverScript.utf8))

        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = [dir + "/serve.py", root, cert, key, "30"]
        let out = Pipe()
        server.standardOutput = out
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // Our own child, by pid (SIGTERM was not enough to stop it at
            // once under the test runner).
            if server.isRunning { kill(server.processIdentifier, SIGKILL) }
            server.waitUntilExit()
        }
        let firstLine = out.fileHandleForReading.availableDataLine(timeout: 20)
        let port = try #require(Int(firstLine.trimmingCharacters(in: .whitespacesAndNewlines)), "no port from the server: \(firstLine)")
        let url = "https://127.0.0.1:\(port)/a.png"
        let cache = dir + "/cache"
        let manifest = dir + "/m.txt"
        FileManager.default.createFile(atPath: manifest, contents: Data((url + "\n").utf8))

        let report = dir + "/r.json"
        let refused = try BinaryRunner.run(["warm", manifest, "--cache", cache, "--progress", "none", "--report", report])
        #expect(refused.status == 1, "\(refused.stderr)")
        let entry = try #require(Self.entries(report).first)
        #expect(entry["outcome"] as? String == "failed")
        #expect(entry["error"] as? String == "tls", "\(entry)")
        #expect(refused.stderr.contains(url))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter { !$0.hasPrefix(".") }.isEmpty)

        // --insecure accepts it (--retry-failed: a TLS failure is permanent
        // and entered the failed-URL list).
        let accepted = try BinaryRunner.run(["warm", manifest, "--cache", cache, "--progress", "none", "--report", report,
                                             "--insecure", "--retry-failed"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let ok = try #require(Self.entries(report).first)
        #expect(ok["outcome"] as? String == "downloaded", "\(ok)")
        let file = try #require(ok["file"] as? String)
        #expect(FileManager.default.contents(atPath: file).map([UInt8].init) == image)
    }

    static func entries(_ report: String) throws -> [[String: Any]] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        return json?["entries"] as? [[String: Any]] ?? []
    }
}

extension FileHandle {
    /// Reads until a newline or `timeout` seconds (bounded: a server that
    /// never starts fails the test instead of hanging it).
    func availableDataLine(timeout: Double) -> String {
        let fd = fileDescriptor
        var collected = Data()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 100) > 0 {
                var byte: UInt8 = 0
                if Glibc.read(fd, &byte, 1) != 1 { break }
                if byte == 0x0A { break }
                collected.append(byte)
            }
        }
        return String(decoding: collected, as: UTF8.self)
    }
}
