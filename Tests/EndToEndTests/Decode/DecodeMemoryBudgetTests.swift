import CImageFixtures
import Foundation
import Testing
import TestSupport

/// `--decode-memory` against the real binary: a 1.1 MB
/// progressive 9999x9999 JPEG took 609 MB of RSS to validate, and six at
/// once 1.2 GB. The images here are 4000x4000 progressive 4:4:4 JPEGs
/// (libjpeg keeps 96 MB of coefficients for each, jdcoefct.c), small
/// enough to make in a test; the peak RSS of the child is GNU time's (MeasuredRun says why).
@Suite(.serialized) struct DecodeMemoryBudgetTests {
    static let side: UInt32 = 4000

    /// One smooth progressive JPEG (a small file, a large decoder).
    static let jpeg: [UInt8] = {
        var buffer = iwf_buffer()
        precondition(iwf_jpeg_smooth(side, side, 1, &buffer) == 0, "fixture encoder failed")
        defer { iwf_free(&buffer) }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.len))
    }()

    /// The six images under six URLs (six cache entries), all in flight at once.
    static func serveSix(_ f: WarmFixture) -> String {
        let urls = (0..<6).map { i -> String in
            f.server.setFile("/big/\(i).jpg", bytes: jpeg, contentType: "image/jpeg")
            return f.server.url("/big/\(i).jpg")
        }
        return f.writeManifest(urls)
    }

    static func warm(_ f: WarmFixture, _ manifest: String, _ extra: [String], time: String) throws -> MeasuredRun {
        try MeasuredRun.run(["warm", manifest, "--cache", f.cache, "--progress", "none", "--concurrency", "6"] + extra,
                            gnuTime: time)
    }

    static let mib: UInt64 = 1 << 20

    @Test func sixLargeProgressiveJPEGsStayWithinTheBudget() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        #expect(Self.jpeg.count < 2_000_000, "the fixture is meant to be a small file: \(Self.jpeg.count) bytes")
        let f = try WarmFixture()
        let manifest = Self.serveSix(f)
        // The same run without decoding: the bodies, the plan, libcurl.
        let baseline = try Self.warm(f, manifest, ["--no-validate"], time: time)
        #expect(baseline.status == 0, "\(baseline.stderr)")
        try FileManager.default.removeItem(atPath: f.cache)

        let budget = 100 * Self.mib
        let bounded = try Self.warm(f, manifest, ["--decode-memory", "100MiB"], time: time)
        #expect(bounded.status == 0, "\(bounded.stderr)")
        #expect(bounded.stdout.contains("6 entries: 6 downloaded"), "\(bounded.stdout)")
        #expect(bounded.peakRSS <= baseline.peakRSS + budget,
                "peak RSS \(bounded.peakRSS / Self.mib) MiB, baseline \(baseline.peakRSS / Self.mib) MiB + budget 100 MiB")
        print("decode memory: six 4000x4000 progressive JPEGs: baseline \(baseline.peakRSS / Self.mib) MiB, "
              + "--decode-memory 100MiB \(bounded.peakRSS / Self.mib) MiB")

        // The check can fail: with room for all six, two validation
        // workers (or more) decode at once and pass the same bound.
        if ProcessInfo.processInfo.activeProcessorCount < 2 {
            try prerequisiteMissing("one processor: the check that two workers pass the bound unbounded did not run")
        }
        try FileManager.default.removeItem(atPath: f.cache)
        let unbounded = try Self.warm(f, manifest, ["--decode-memory", "4GiB"], time: time)
        #expect(unbounded.status == 0, "\(unbounded.stderr)")
        print("decode memory: the same with --decode-memory 4GiB: \(unbounded.peakRSS / Self.mib) MiB")
        #expect(unbounded.peakRSS > baseline.peakRSS + budget,
                "without a bound two decodes at once should pass the bound: \(unbounded.peakRSS / Self.mib) MiB")
    }

    @Test func anImageOverTheWholeBudgetFailsAsTooLargeWithItsEstimate() throws {
        let f = try WarmFixture()
        f.server.setFile("/big.jpg", bytes: Self.jpeg, contentType: "image/jpeg")
        let manifest = f.writeManifest([f.server.url("/big.jpg")])
        let report = f.dir + "/report.json"
        let r = try f.warm([manifest, "--decode-memory", "50MiB", "--report", report])
        #expect(r.status == 1)
        // 3 components x 500 x 500 blocks x 128 bytes, rows and the base.
        let reason = "JPEG 4000x4000 needs an estimated 91.9 MiB to decode, more than the decode memory budget of 50.0 MiB (--decode-memory)"
        #expect(r.stderr.contains("\(f.server.url("/big.jpg")): \(reason)"), "\(r.stderr)")
        #expect(r.stdout.contains("errors: 1 too-large"), "\(r.stdout)")
        let entry = try f.report(report).entries[0]
        #expect(entry["error"] as? String == "too-large")
        #expect(entry["outcome"] as? String == "failed")

        // Not the URL's fault: it is not on the failed-URL list, and a
        // larger budget stores it on the next run.
        let again = try f.warm([manifest, "--decode-memory", "256MiB"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("1 entry: 1 downloaded"), "\(again.stdout)")

        // cache verify: judged by no one, so kept and listed, exit 1.
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--decode-memory", "50MiB"])
        #expect(verify.status == 1)
        let path = try f.cachePath(f.server.url("/big.jpg"))
        #expect(verify.stdout.contains("\(path): not checked: over --decode-memory, kept; \(reason)"), "\(verify.stdout)")
        #expect(verify.stdout.contains("checked 1 file: 0 broken, 1 not checked (over --decode-memory), 0 stray temp files"),
                "\(verify.stdout)")
        let deleting = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--decode-memory", "50MiB", "--delete"])
        #expect(deleting.status == 1)
        #expect(FileManager.default.fileExists(atPath: path), "an unchecked file is never deleted")
        let json = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--decode-memory", "50MiB", "--json"])
        #expect(json.stdout.contains("\"error\" : \"too-large\""), "\(json.stdout)")
        // Within the default budget it is checked and clean.
        let clean = try BinaryRunner.run(["cache", "verify", "--cache", f.cache])
        #expect(clean.status == 0, "\(clean.stdout)")
    }

    @Test func aZeroBudgetIsAUsageError() throws {
        let r = try BinaryRunner.run(["warm", "m.txt", "--decode-memory", "0"])
        #expect(r.status == 64 || r.status == 2, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("--decode-memory must be at least 1 byte"), "\(r.stderr)")
    }
}
