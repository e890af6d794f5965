import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One run of the imgwarm binary with what the kernel counted for it:
/// CPU time (wait4's rusage of the child) and, through GNU time, its peak
/// resident memory. Wall time on a shared machine says little; these do
/// not depend on what else runs.
///
/// Why not wait4's ru_maxrss for the memory too: posix_spawn starts the
/// child with vfork semantics on the test process's memory, and exec
/// keeps the high-water mark of that memory in the child's figure, so a
/// test process of 300 MB made every child "peak" at 300 MB. GNU time forks
/// from its own small process before the exec, so the figure it reports
/// is the binary's own.
public struct MeasuredRun: Sendable {
    /// The exit status, or 128 + the signal that ended it.
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// The child's peak resident memory in bytes (GNU time's %M); 0 when
    /// not asked for.
    public var peakRSS: UInt64
    /// User plus system CPU seconds.
    public var cpuSeconds: Double

    /// Runs the binary with `args` (stdin from /dev/null, output into
    /// files, so a large output cannot block it) and waits for it.
    /// `executable`: another program than imgwarm (a tool that starts a
    /// daemon, such as tmux, whose daemon would keep a pipe open).
    /// `gnuTime`: the path of GNU time, to measure the peak RSS.
    public static func run(_ args: [String], environment: [String: String] = [:],
                           executable: String = BinaryRunner.executable, gnuTime: String? = nil) throws -> MeasuredRun {
        let dir = makeTempDirectory("imgwarm-measured")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let outPath = dir + "/stdout", errPath = dir + "/stderr", rssPath = dir + "/rss"
        let program = gnuTime ?? executable
        let programArgs = gnuTime == nil ? args : ["-f", "%M", "-o", rssPath, executable] + args
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let argv = [program] + programArgs
        let envp = env.map { "\($0.key)=\($0.value)" }
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnv: [UnsafeMutablePointer<CChar>?] = envp.map { strdup($0) } + [nil]
        defer {
            for p in cArgs { free(p) }
            for p in cEnv { free(p) }
        }
        // The child starts with no signal blocked, as from a shell: the
        // test's threads block most signals, and a mask inherited through
        // exec kept a tmux server from ever receiving the SIGTERM its own
        // `kill-server` sends it (each pane's server outlived its test).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, &attributes, &cArgs, &cEnv)
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
        // GNU time exits with its child's status; its %M is in KiB.
        let kib = UInt64(read(rssPath).split(separator: "\n").last.map(String.init) ?? "") ?? 0
        return MeasuredRun(status: exitStatus, stdout: read(outPath), stderr: read(errPath),
                           peakRSS: kib * 1024,
                           cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }
}
