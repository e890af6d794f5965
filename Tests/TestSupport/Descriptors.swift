import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A run of the binary under strace: what it printed, its status, and every
/// call on a file descriptor that failed with EBADF.
public struct DescriptorTrace: Sendable {
    public var status: Int32
    /// stdout and stderr together.
    public var output: String
    /// strace's lines of the calls that failed with EBADF: a descriptor
    /// closed twice (the second close may take a file another thread has
    /// opened in between), or used after its close.
    public var badDescriptorCalls: [String]
}

extension BinaryRunner {
    /// Runs `imgwarm args...` under `strace -f` (every thread), tracing the
    /// calls that take a descriptor and keeping those that failed with
    /// EBADF. strace's lines go to a file of their own, so the binary's
    /// output is as a user sees it. `descriptorLimit`: the binary runs
    /// under `prlimit --nofile=N` (the paths where an open or a dup fails
    /// with EMFILE). Without strace (or prlimit) the test is skipped
    /// (failed under CI, which installs them).
    public static func runTracingDescriptors(_ args: [String], environment: [String: String] = [:],
                                             descriptorLimit: Int? = nil) throws -> DescriptorTrace {
        let strace = try neededTool("strace", for: "counting calls on closed descriptors")
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw NotBuilt() }
        var command = [executable]
        if let descriptorLimit {
            command = [try neededTool("prlimit", for: "running the binary with few descriptors"), "--nofile=\(descriptorLimit)"] + command
        }
        let log = NSTemporaryDirectory() + "imgwarm-strace-\(getpid())-\(UUID().uuidString.prefix(8))"
        defer { unlink(log) }
        let traced = ["-f", "-qq", "-o", log, "-e", "trace=%desc", "-e", "status=failed"] + command + args
        guard let run = runTool(strace, traced, environment: environment) else {
            throw MissingPrerequisite(description: "\(strace) could not be started")
        }
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        return DescriptorTrace(status: run.status, output: run.output,
                               badDescriptorCalls: lines.filter { $0.contains("EBADF") }.map(String.init))
    }
}

/// The descriptors this process holds on files and folders under `folder`
/// (what /proc/self/fd says each one names; a deleted file shows with
/// " (deleted)"), as "fd -> target" lines. A library that releases what it
/// opened leaves none once its objects are gone, whatever other tests of
/// the process hold elsewhere.
public func openDescriptors(under folder: String) -> [String] {
    let resolved = (folder as NSString).resolvingSymlinksInPath
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var held: [String] = []
    for name in names {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else { continue }
        for prefix in Set([folder, resolved]) where target == prefix || target.hasPrefix(prefix + "/") {
            held.append("\(name) -> \(target)")
            break
        }
    }
    return held.sorted()
}
