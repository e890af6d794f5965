import Foundation
import Testing
import TestSupport

/// Large bodies spill to unnamed files in `.imgwarm/tmp`: the binary
/// against loopback servers, the report's `"bodies"` figures, and the
/// stored files.
struct BodySpillEndToEndTests {
    /// `"bodies"` of a report.
    static func bodies(_ report: String) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        return try #require(json?["bodies"] as? [String: Any], "no bodies figures in the report")
    }

    static func int(_ object: [String: Any], _ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? -1 }

    /// Whether /dev/shm is a tmpfs mount (`/proc/mounts`).
    static var shmIsTmpfs: Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return false }
        return mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
        }
    }

    /// Serves `count` valid PNGs of `width` x `height` (stored deflate:
    /// about 3 bytes a pixel) with a Content-Length.
    static func serveLargePNGs(_ f: WarmFixture, _ count: Int, width: Int, height: Int) -> (urls: [String], bytes: [[UInt8]]) {
        var urls: [String] = [], bytes: [[UInt8]] = []
        for i in 0..<count {
            let png = TinyPNG.make(width: width, height: height, seed: 4_000 + i)
            f.server.setFile("/large/\(i).png", bytes: png, contentType: "image/png")
            urls.append(f.server.url("/large/\(i).png"))
            bytes.append(png)
        }
        return (urls, bytes)
    }

    static func expectStored(_ f: WarmFixture, report: String, _ bytes: [[UInt8]]) throws {
        let rows = try f.report(report).entries
        #expect(rows.count == bytes.count)
        for (i, row) in rows.enumerated() {
            #expect(row["outcome"] as? String == "downloaded", "\(row)")
            #expect(row["format"] as? String == "png", "entry \(i) was not validated as a PNG: \(row)")
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == bytes[i], "entry \(i) differs from what was served")
        }
    }

    /// On a disk: ten 2.9 MB PNGs under `--memory 48MiB` (16 MiB for the
    /// bodies, a 1 MiB threshold). Each is announced larger than the
    /// threshold, so it goes to its file from the first byte: no transfer
    /// pauses, nothing is charged, every file is validated from its
    /// mapping and stored byte for byte; nothing is left in `.imgwarm/tmp`.
    @Test(.needsTools("time", for: "the peak RSS of the binary"))
    func largeBodiesSpillOnADiskWithoutPausing() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let f = try WarmFixture()
        let (urls, bytes) = Self.serveLargePNGs(f, 10, width: 1100, height: 880)
        let report = f.dir + "/r.json"
        let r = try MeasuredRun.run(["warm", f.writeManifest(urls), "--cache", f.cache, "--progress", "none", "--retries", "0",
                                     "--memory", "48MiB", "--decode-memory", "32MiB", "--report", report], gnuTime: time)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectStored(f, report: report, bytes)
        let b = try Self.bodies(report)
        #expect(b["spill"] as? String == "disk", "\(b)")
        #expect(Self.int(b, "spill_threshold") == 1 << 20)
        #expect(Self.int(b, "spilled") == 10 && Self.int(b, "spilled_bytes") == bytes.reduce(0) { $0 + $1.count }, "\(b)")
        #expect(Self.int(b, "memory_paused_transfers") == 0 && Self.int(b, "memory_peak") == 0, "\(b)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: f.cache + "/.imgwarm/tmp")) ?? ["?"]).isEmpty)
        let mib: UInt64 = 1 << 20
        // The binary (about 45 MiB), the bodies' 16 MiB, and the mappings
        // of the bodies being validated (page cache, counted in RSS while
        // mapped).
        #expect(r.peakRSS < 120 * mib, "peak RSS \(r.peakRSS / mib) MiB")
    }

    /// On tmpfs a spilled body is memory: the same bodies under the same
    /// budget with the cache in /dev/shm stay charged, so transfers pause
    /// and the charge peaks near the budget (plus the oldest body, which
    /// may always grow), and every file is stored whole.
    @Test(.needs(BodySpillEndToEndTests.shmIsTmpfs, "/dev/shm is not a tmpfs: the tmpfs spill test did not run"),
          .needsTools("time", for: "the peak RSS of the binary"))
    func spilledBodiesOnTmpfsStayCharged() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let f = try WarmFixture()
        let cache = "/dev/shm/imgwarm-spill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let (urls, bytes) = Self.serveLargePNGs(f, 8, width: 1000, height: 800)
        let report = f.dir + "/r.json"
        // -j 8: the transfers start together (the adaptive limit would
        // start fewer and let early bodies finish before later ones need room).
        let r = try MeasuredRun.run(["warm", f.writeManifest(urls), "--cache", cache, "--progress", "none", "--retries", "0",
                                     "-j", "8", "--memory", "40MiB", "--decode-memory", "32MiB", "--report", report], gnuTime: time)
        #expect(r.status == 0, "\(r.stderr)")
        try Self.expectStored(f, report: report, bytes)
        let b = try Self.bodies(report)
        #expect(b["spill"] as? String == "memory-filesystem", "\(b)")
        #expect(Self.int(b, "spilled") == 8, "\(b)")
        #expect(Self.int(b, "memory_paused_transfers") > 0, "\(b)")
        let limit = Self.int(b, "memory_limit"), peak = Self.int(b, "memory_peak")
        #expect(limit == 8 << 20 && peak >= limit / 2 && peak <= limit + bytes[0].count + (1 << 20), "\(b)")
        let mib: UInt64 = 1 << 20
        #expect(r.peakRSS < 120 * mib, "peak RSS \(r.peakRSS / mib) MiB")
    }

    /// A thumbnail never spills, whatever the budget: twelve bodies of up
    /// to 250 KB under `--memory 64KiB` stay in memory (the threshold is
    /// never below 256 KiB), a gzip one too, while one 2 MB body sent
    /// gzip (no length known before it inflates) moves to its file as it
    /// grows past the threshold, and is stored inflated.
    @Test func aThumbnailNeverSpills() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        var served: [[UInt8]] = []
        for i in 0..<12 {
            let bytes = TinyPNG.make(seed: 700 + i) + [UInt8](repeating: UInt8(i), count: 20_000 * (i + 1) + 10_000)
            f.server.setFile("/t\(i).png", bytes: bytes, contentType: "image/png")
            urls.append(f.server.url("/t\(i).png"))
            served.append(bytes)
        }
        let report = f.dir + "/r.json"
        var r = try f.warm([f.writeManifest(urls), "--memory", "64KiB", "--decode-memory", "1KiB", "--no-validate",
                            "--retries", "0", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        var b = try Self.bodies(report)
        #expect(Self.int(b, "spill_threshold") == 256 << 10 && Self.int(b, "spilled") == 0, "\(b)")
        for (i, row) in try f.report(report).entries.enumerated() {
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == served[i], "entry \(i)")
        }

        let largeBytes = TinyPNG.make(seed: 799) + [UInt8](repeating: 7, count: 2_000_000)
        f.server.setFile("/large.png", bytes: largeBytes, contentType: "image/png")
        let large = f.server.url("/gzip/large.png"), gzipThumbnail = f.server.url("/gzip/t3.png")
        r = try f.warm([f.writeManifest(urls + [gzipThumbnail, large], name: "m2.txt"), "--memory", "64KiB", "--decode-memory", "1KiB",
                        "--no-validate", "--retries", "0", "--refresh", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        b = try Self.bodies(report)
        #expect(Self.int(b, "spilled") == 1 && Self.int(b, "spilled_bytes") == largeBytes.count, "\(b)")
        let rows = try f.report(report).entries
        for (url, bytes) in [(large, largeBytes), (gzipThumbnail, served[3])] {
            let row = try #require(rows.first { $0["url"] as? String == url })
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == bytes, "\(url)")
        }
    }

    /// `--limit-rate` with transfers pausing for memory: a chunk paused on
    /// is handed over again by curl on resume and is taken from the bucket
    /// once. Taken twice, the same run went at 70% of the rate.
    @Test func aChunkPausedForMemoryCountsOnceAgainstLimitRate() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        for i in 0..<16 {
            f.server.setFile("/r\(i).bin", bytes: (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
            urls.append(f.server.url("/r\(i).bin"))
        }
        let report = f.dir + "/r.json"
        let r = try f.warm([f.writeManifest(urls), "--memory", "64KiB", "--decode-memory", "1KiB", "--no-validate",
                            "--retries", "0", "--limit-rate", "500k", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.int(try Self.bodies(report), "memory_paused_transfers") > 0)
        let totals = try f.report(report).totals
        let bytes = try #require((totals["bytes_downloaded"] as? NSNumber)?.doubleValue)
        let seconds = try #require((totals["seconds"] as? NSNumber)?.doubleValue)
        #expect(bytes == 3_200_000)
        #expect(abs(bytes / seconds / 512_000 - 1) <= 0.06, "\(bytes / seconds) bytes/s over \(seconds) s")
    }

    /// The defaults (no `--memory`) against a hostile server on 4 ports:
    /// 8 gzip bombs (64 KB on the wire, 63 MiB inflated), 8 large PNGs
    /// (5.8 MB) with a length, 8 streamed without one, and 8 sent slowly
    /// (64 KB every 20 ms), all at once. Every large body goes to its file
    /// as it arrives, so memory holds the binary, the bodies below the
    /// threshold and those being validated; the PNGs are stored whole.
    @Test(.needsTools("time", "python3", for: "the peak RSS of the binary against a python3 hostile server"))
    func theDefaultsHoldAgainstAHostileServer() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let python = try neededTool("python3", for: "the hostile server")
        let f = try WarmFixture()
        let pngPath = f.dir + "/large.png"
        let script = #"""
        import gzip, os, signal, struct, sys, threading, time, zlib
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
        w, h = 1600, 1200
        raw = b''.join(b'\0' + os.urandom(w * 3) for _ in range(h))
        png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
               + chunk(b'IDAT', zlib.compress(raw, 1)) + chunk(b'IEND', b''))
        open(sys.argv[1], 'wb').write(png)
        bomb = gzip.compress(b'\x89PNG\r\n\x1a\n' + b'\0' * (63 * 1024 * 1024 - 8), 9)
        class H(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def do_GET(self):
                kind = self.path.split('/')[1]
                self.send_response(200)
                self.send_header('Content-Type', 'image/png')
                if kind == 'bomb':
                    self.send_header('Content-Encoding', 'gzip')
                    self.send_header('Content-Length', str(len(bomb)))
                    self.end_headers()
                    self.wfile.write(bomb)
                elif kind == 'chunked':
                    self.send_header('Transfer-Encoding', 'chunked')
                    self.end_headers()
                    for i in range(0, len(png), 65536):
                        part = png[i:i + 65536]
                        self.wfile.write(b'%x\r\n' % len(part) + part + b'\r\n')
                    self.wfile.write(b'0\r\n\r\n')
                else:
                    self.send_header('Content-Length', str(len(png)))
                    self.end_headers()
                    if kind == 'slow':
                        for i in range(0, len(png), 65536):
                            self.wfile.write(png[i:i + 65536])
                            self.wfile.flush()
                            time.sleep(0.02)
                    else:
                        self.wfile.write(png)
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
        try #require(ports.count == 4, "the hostile server did not start")
        var urls: [String] = []
        for (k, kind) in ["bomb", "large", "chunked", "slow"].enumerated() {
            for i in 0..<8 { urls.append("http://127.0.0.1:\(ports[(k + i) % 4])/\(kind)/\(i).png") }
        }
        let report = f.dir + "/r.json"
        let r = try MeasuredRun.run(["warm", f.writeManifest(urls), "--cache", f.cache, "--progress", "none", "--retries", "0",
                                     "--report", report], gnuTime: time)
        #expect(r.status == 1, "\(r.stderr)")
        let png = try #require(FileManager.default.contents(atPath: pngPath).map(Array.init))
        let rows = try f.report(report).entries
        for row in rows {
            let url = row["url"] as? String ?? ""
            if url.contains("/bomb/") {
                #expect(row["outcome"] as? String == "failed", "\(row)")
                continue
            }
            #expect(row["outcome"] as? String == "downloaded", "\(row)")
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == png, "\(url) differs from what was served")
        }
        let b = try Self.bodies(report)
        #expect(b["spill"] as? String == "disk" && Self.int(b, "spilled") == 32, "\(b)")
        let mib: UInt64 = 1 << 20
        // 436 MiB before spilling. Now the binary (about 45 MiB), libcurl's
        // buffers, the bodies below the threshold, and the mapped pages of
        // the bodies being validated (a bomb's 63 MiB, per validation
        // worker: page cache, counted in RSS while mapped).
        #expect(r.peakRSS < 260 * mib, "peak RSS \(r.peakRSS / mib) MiB")
        print("peak RSS at the defaults against the hostile server: \(r.peakRSS / mib) MiB")
    }
}
