import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One run of the imgwarm binary with what the kernel counted for it
/// (wait4's rusage of that child alone): peak resident memory and CPU
/// time. Wall time on a shared machine says little; these do not depend on
/// what else runs.
public struct MeasuredRun: Sendable {
    /// The exit status, or 128 + the signal that ended it.
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// ru_maxrss, in bytes.
    public var peakRSS: UInt64
    /// User plus system CPU seconds.
    public var cpuSeconds: Double

    /// Runs the binary with `args` (stdin from /dev/null, output into
    /// files, so a large output cannot block it) and waits for it.
    /// `executable`: another program than imgwarm (a tool that starts a
    /// daemon, such as tmux, whose daemon would keep a pipe open).
    public static func run(_ args: [String], environment: [String: String] = [:],
                           executable: String = BinaryRunner.executable) throws -> MeasuredRun {
        let dir = makeTempDirectory("imgwarm-measured")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let outPath = dir + "/stdout", errPath = dir + "/stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = [executable] + args
        let envp = env.map { "\($0.key)=\($0.value)" }
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = envp.map { strdup($0) } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, &cArgs, &cEnv)
        guard spawned == 0 else {
            throw NSError(domain: "MeasuredRun", code: Int(spawned),
                          userInfo: [NSLocalizedDescriptionKey: "posix_spawn: \(String(cString: strerror(spawned)))"])
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG by hand (macros in C).
        let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return MeasuredRun(status: exitStatus, stdout: read(outPath), stderr: read(errPath),
                           peakRSS: UInt64(max(0, usage.ru_maxrss)) * 1024,
                           cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }
}
