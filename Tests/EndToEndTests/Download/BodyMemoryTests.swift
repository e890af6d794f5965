import Foundation
import Testing
import TestSupport

/// `--memory` on the command line.
struct BodyMemoryEndToEndTests {
    /// A budget far below the bodies (12 of 300 KB, 64 KiB for all):
    /// transfers pause and go on one after another, the oldest first, and
    /// every body arrives whole; the pauses do not count toward --timeout.
    @Test func aTinyBudgetPausesTransfersWithoutDeadlock() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        var served: [[UInt8]] = []
        for i in 0..<12 {
            let bytes = TinyPNG.make(seed: 900 + i) + [UInt8](repeating: UInt8(i), count: 300_000)
            f.server.setFile("/p\(i).png", bytes: bytes, contentType: "image/png")
            urls.append(f.server.url("/p\(i).png"))
            served.append(bytes)
        }
        let report = f.dir + "/r.json"
        let r = try f.warm([f.writeManifest(urls), "--memory", "64KiB", "--decode-memory", "1KiB", "--no-validate",
                            "--timeout", "5", "--retries", "0", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try f.report(report).entries
        #expect(rows.count == 12 && rows.allSatisfy { $0["outcome"] as? String == "downloaded" }, "\(rows)")
        for (i, row) in rows.enumerated() {
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == served[i], "entry \(i)")
        }
    }

    @Test func decodeMemoryAboveMemoryIsAUsageError() throws {
        let f = try WarmFixture()
        let r = try f.warm([f.writeManifest(f.servePNGs(1)), "--memory", "64MiB", "--decode-memory", "128MiB"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("--decode-memory") && r.stderr.contains("--memory"), "\(r.stderr)")
        #expect(f.server.requestCount(path: "/img/0.png") == 0)
    }

    /// A hostile server's gzip bodies: 24 of them, each 64 KB on the wire
    /// inflating to 63 MiB, from 4 ports, under `--memory 128MiB`. libcurl
    /// inflating them kept a paused transfer's inflated rest outside the
    /// budget (1.40 GB peak RSS); inflated by the write callback, charged
    /// before each chunk is consumed, they stay near the budget. A real gzip
    /// PNG among them is stored decoded; an encoding not asked for (br)
    /// fails its entry by name.
    @Test(.needsTools("time", "python3", for: "the peak RSS of the binary against a python3 gzip server"))
    func gzipBodiesStayWithinTheBudget() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let python = try neededTool("python3", for: "the gzip server")
        let f = try WarmFixture()
        let png = TinyPNG.make(width: 7, height: 5, seed: 77)
        let pngPath = f.dir + "/real.png"
        FileManager.default.createFile(atPath: pngPath, contents: Data(png))
        let script = #"""
        import gzip, signal, sys, threading
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        bomb = gzip.compress(b'\x89PNG\r\n\x1a\n' + b'\0' * (63 * 1024 * 1024 - 8), 9)
        real = gzip.compress(open(sys.argv[1], 'rb').read(), 9)
        class H(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def do_GET(self):
                body, encoding = (real, 'gzip') if self.path == '/real.png' else (b'\x1b' * 100, 'br') if self.path == '/br.png' else (bomb, 'gzip')
                self.send_response(200)
                self.send_header('Content-Type', 'image/png')
                self.send_header('Content-Encoding', encoding)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *a): pass
        servers = [ThreadingHTTPServer(('127.0.0.1', 0), H) for _ in range(4)]
        for s in servers[1:]: threading.Thread(target=s.serve_forever, daemon=True).start()
        print(' '.join(str(s.server_address[1]) for s in servers), flush=True)
        servers[0].serve_forever()
        """#
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = ["-c", script, pngPath]
        let out = Pipe()
        server.standardOutput = out
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) { line.append(byte) }
        let ports = String(decoding: line, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        try #require(ports.count == 4, "the gzip server did not start")
        var urls: [String] = []
        for port in ports { for i in 0..<6 { urls.append("http://127.0.0.1:\(port)/bomb\(i).png") } }
        let real = "http://127.0.0.1:\(ports[0])/real.png", br = "http://127.0.0.1:\(ports[1])/br.png"
        let report = f.dir + "/r.json"
        let r = try MeasuredRun.run(["warm", f.writeManifest(urls + [real, br]), "--cache", f.cache, "--progress", "none",
                                     "--retries", "0", "--memory", "128MiB", "--decode-memory", "32MiB", "--report", report],
                                    gnuTime: time)
        #expect(r.status == 1, "\(r.stderr)")
        let mib: UInt64 = 1 << 20
        // The budget, one body past it (the oldest holder may always grow),
        // the copies of the one being validated and the binary itself.
        #expect(r.peakRSS < 400 * mib, "peak RSS \(r.peakRSS / mib) MiB")
        let rows = try f.report(report).entries
        let realRow = rows.first { $0["url"] as? String == real }
        #expect(realRow?["outcome"] as? String == "downloaded", "\(String(describing: realRow))")
        if let file = realRow?["file"] as? String { #expect(FileManager.default.contents(atPath: file).map(Array.init) == png) }
        #expect(r.stderr.contains("content encoding br was not asked for"), "\(r.stderr)")
    }
}
