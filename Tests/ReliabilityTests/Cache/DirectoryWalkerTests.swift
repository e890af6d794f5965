import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// 20,000 nested folders in a shared sdwebimage cache: the walk is a loop
/// (no stack overflow), holds at most 64 descriptors, keeps a name and an
/// identity per level, and does not go (nor delete) deeper than 1,000
/// levels. verify, prune, stats and clear end normally, in little memory.
@Suite(.serialized) struct DirectoryWalkerTests {
    @Test func twentyThousandNestedFoldersNeitherCrashNorCostMemory() throws {
        let time = try neededTool("time", for: "the peak RSS of the binary")
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(2))]).status == 0)
        // Nested by descriptor: a path of 20,000 components is longer than PATH_MAX.
        var fd = open(f.cache, O_RDONLY | O_DIRECTORY)
        let entry = String(repeating: "c", count: 32) + ".png"
        for level in 1...20_000 {
            #expect(mkdirat(fd, "d", 0o755) == 0)
            let child = openat(fd, "d", O_RDONLY | O_DIRECTORY)
            close(fd)
            fd = child
            if level == 10 || level == 1_500 {
                let file = openat(fd, entry, O_WRONLY | O_CREAT, 0o644)
                _ = write(file, "x", 1)
                close(file)
            }
        }
        close(fd)
        let deepFile = (0..<1_500).map { _ in "d" }.joined(separator: "/") + "/" + entry
        for command in [["verify"], ["stats"], ["prune", "--max-age", "0s"], ["clear"]] {
            let run = try MeasuredRun.run(["cache"] + command + ["--cache", f.cache], gnuTime: time)
            #expect(run.status < 128, "\(command): \(run.status) \(run.stderr.prefix(300))")
            #expect(run.status == 0 || (command == ["verify"] && run.status == 1), "\(command): \(run.stderr.prefix(300))")
            #expect(run.peakRSS > 0 && run.peakRSS < 100 << 20, "\(command): \(run.peakRSS) bytes")
            #expect(run.stderr.contains("more than 1000 folders deep: not walked, nothing in it removed"), "\(command): \(run.stderr.prefix(300))")
        }
        // The folder at level 1,500 was never walked: its file is still there.
        let dirfd = open(f.cache, O_RDONLY | O_DIRECTORY)
        defer { close(dirfd) }
        var st = stat()
        // Opened folder by folder: the path is longer than PATH_MAX.
        var at = dup(dirfd)
        var parts = deepFile.split(separator: "/").map(String.init)
        let name = parts.removeLast()
        for part in parts {
            let next = openat(at, part, O_RDONLY | O_DIRECTORY)
            close(at)
            at = next
        }
        #expect(fstatat(at, name, &st, 0) == 0)
        close(at)
    }

    /// Under `ulimit -n 100` the walk and the remover still reach files
    /// 999 folders down (they hold at most 64 descriptors): verify finds
    /// them, prune removes them.
    @Test func filesDeepDownAreReachedWithFewDescriptors() throws {
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(1))]).status == 0)
        var fd = open(f.cache, O_RDONLY | O_DIRECTORY)
        let entry = String(repeating: "e", count: 32) + ".png"
        for level in 1...1_200 {
            #expect(mkdirat(fd, "d", 0o755) == 0)
            let child = openat(fd, "d", O_RDONLY | O_DIRECTORY)
            close(fd)
            fd = child
            if [300, 700, 999].contains(level) {
                let file = openat(fd, entry, O_WRONLY | O_CREAT, 0o644)
                _ = write(file, "x", 1)
                close(file)
            }
        }
        close(fd)
        func limited(_ args: [String]) throws -> (status: Int32, output: String) {
            let sh = try neededTool("sh", for: "a lower descriptor limit")
            let r = try #require(runTool(sh, ["-c", "ulimit -n 100 && exec \"$0\" \"$@\"", BinaryRunner.executable] + args))
            return (r.status, r.output)
        }
        let verify = try limited(["cache", "verify", "--cache", f.cache])
        #expect(verify.status == 1 && verify.output.contains("checked 4 files: 3 broken"), "\(verify.output.suffix(300))")
        let prune = try limited(["cache", "prune", "--max-age", "0s", "--cache", f.cache])
        #expect(prune.status == 0 && prune.output.contains("removed 4 files"), "\(prune.output.suffix(300))")
        #expect(!prune.output.contains("Too many open files"), "\(prune.output.suffix(300))")
    }
}
