import Foundation
import Testing
import TestSupport

/// docs/cli-contract.md: exit status 3 when "the cache cannot be used
/// (... disk full ...)"; errors are one line naming the path; files already written
/// stay intact and no partial file is left.
@Suite(.serialized) struct DiskFullTests {
    /// Mounting a tmpfs needs root (CAP_SYS_ADMIN); CI runs as root.
    static let canMountTmpfs: Bool = {
        guard let mount = findTool("mount"), let umount = findTool("umount") else { return false }
        let probe = makeTempDirectory("imgwarm-tmpfs-probe")
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard runTool(mount, ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe])?.status == 0 else { return false }
        runTool(umount, [probe])
        return true
    }()

    @Test(.needs(canMountTmpfs, "cannot `mount -t tmpfs` here (needs root): the disk-full test did not run"))
    func diskFullExitsThreeWithOneClearLineAndKeepsWrittenFilesWhole() throws {
        let f = try WarmFixture()
        let mountPoint = f.dir + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try #require(findTool("mount")), umount = try #require(findTool("umount"))
        let mounted = runTool(mount, ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint])
        try #require(mounted?.status == 0, "mount failed: \(mounted?.output ?? "no mount")")
        defer { runTool(umount, ["-l", mountPoint]) }

        // 40 images of ~120 KB: 4.8 MB for a 2 MB file system.
        var urls: [String] = []
        var bodies: [[UInt8]] = []
        for i in 0..<40 {
            let bytes = TinyPNG.make(width: 200, height: 200, seed: 90_000 + i)
            f.server.setFile("/big/\(i).png", bytes: bytes, contentType: "image/png")
            urls.append(f.server.url("/big/\(i).png"))
            bodies.append(bytes)
        }
        let cache = mountPoint + "/cache"
        let names = try BinaryRunner.run(["cache", "path", "--cache", cache, "--"] + urls).stdout
            .split(separator: "\n").map { ($0 as NSString).lastPathComponent }
        let expected = Dictionary(uniqueKeysWithValues: zip(names, bodies))
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/report.json"  // outside the full file system
        let r = try BinaryRunner.run(["warm", manifest, "--cache", cache, "-j", "4", "--progress", "none", "--report", report])

        #expect(!r.signalled, "\(r.stderr)")
        #expect(r.status == 3, "status \(r.status): \(r.stderr)")
        // The final line says what happened and where, on one line.
        let lastLine = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastLine.contains("disk full"), "\(r.stderr)")
        #expect(lastLine.contains(cache), "\(lastLine)")
        // Files already written are whole; no partial file, no temp file.
        let audit = auditCache(cache, expected: expected)
        #expect(audit.problems.isEmpty, "\(audit.problems)")
        #expect(audit.whole > 0, "nothing was written before the disk filled up")
        #expect(audit.whole < urls.count)
        #expect(tempFiles(cache).isEmpty, "\(tempFiles(cache))")
        // The report is written and accounts for every entry.
        let (entries, totals) = try f.report(report)
        #expect(entries.count == urls.count)
        #expect(totals["downloaded"] as? Int == audit.whole)
        #expect(entries.contains { $0["error"] as? String == "disk" })
        // imgwarm's own check agrees: nothing broken, no stray temp file.
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", cache])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // A second run on the still-full disk: the same clean exit 3, what
        // is there stays whole, and the state store still opens.
        let again = try BinaryRunner.run(["warm", manifest, "--cache", cache, "-j", "4", "--progress", "none"])
        #expect(!again.signalled && again.status == 3, "status \(again.status): \(again.stderr)")
        #expect(again.stderr.split(separator: "\n").last.map { $0.contains("disk full") && $0.contains(cache) } == true, "\(again.stderr)")
        let after = auditCache(cache, expected: expected)
        #expect(after.problems.isEmpty, "\(after.problems)")
        #expect(after.whole >= audit.whole)
        #expect(tempFiles(cache).isEmpty)
        #expect(try BinaryRunner.run(["cache", "failed", "--cache", cache]).status == 0)
    }

    /// A body past the spill threshold goes to an unnamed file in the
    /// cache's own `.imgwarm/tmp`, on the cache's filesystem: when that
    /// file cannot be written (2.9 MB PNGs, a 2 MB tmpfs), the disk is full
    /// as it would be for the store. The run stops the same way: exit 3,
    /// the last line `PATH: disk full; stopped`, the entry's error `disk`
    /// (not `network`), nothing on the failed-URL list, nothing left in
    /// `.imgwarm/tmp`, and the report's `spilled` figures count no body
    /// (the cut attempts' files were dropped).
    @Test(.needs(canMountTmpfs, "cannot `mount -t tmpfs` here (needs root): the disk-full test did not run"))
    func aBodySpilledToAFullDiskStopsTheRunAsDiskFull() throws {
        let f = try WarmFixture()
        let mountPoint = f.dir + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try #require(findTool("mount")), umount = try #require(findTool("umount"))
        let mounted = runTool(mount, ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint])
        try #require(mounted?.status == 0, "mount failed: \(mounted?.output ?? "no mount")")
        defer { runTool(umount, ["-l", mountPoint]) }
        var urls: [String] = []
        for i in 0..<4 {
            f.server.setFile("/large/\(i).png", bytes: TinyPNG.make(width: 1100, height: 880, seed: 91_000 + i), contentType: "image/png")
            urls.append(f.server.url("/large/\(i).png"))
        }
        let cache = mountPoint + "/cache"
        let report = f.dir + "/report.json"
        let r = try BinaryRunner.run(["warm", f.writeManifest(urls), "--cache", cache, "-j", "1", "--progress", "none",
                                      "--report", report])
        #expect(!r.signalled, "\(r.stderr)")
        #expect(r.status == 3, "status \(r.status): \(r.stderr)")
        let lastLine = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastLine.contains("disk full") && lastLine.contains(cache + "/.imgwarm/tmp"), "\(r.stderr)")
        #expect(!r.stderr.contains("curl error"), "\(r.stderr)")
        let (entries, _) = try f.report(report)
        #expect(entries.first?["error"] as? String == "disk", "\(entries)")
        #expect(!entries.contains { $0["error"] as? String == "network" }, "\(entries)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let bodies = try #require(json?["bodies"] as? [String: Any])
        #expect((bodies["spilled"] as? NSNumber)?.intValue == 0 && (bodies["spilled_bytes"] as? NSNumber)?.intValue == 0, "\(bodies)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: cache + "/.imgwarm/tmp")) ?? ["?"]).isEmpty)
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", cache])
        let list = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [Any]
        #expect(list?.isEmpty == true, "\(failed.stdout)")
    }
}
