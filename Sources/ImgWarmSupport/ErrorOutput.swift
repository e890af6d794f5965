#if canImport(Glibc)
// `stderr` is a C global variable: Swift 6 refuses to read it from
// nonisolated code unless the module is imported as pre-concurrency.
@preconcurrency import Glibc
#endif
import Foundation

/// imgwarm's own stderr, kept apart from what decoder libraries print.
///
/// Debian's libjxl 0.7 is built without NDEBUG and prints `JXL_FAILURE`
/// traces for every damaged JPEG XL, and libde265 prints "SPS error: ..."
/// for damaged HEIC; neither version has a switch or a logger hook to turn
/// that off (the validator already gets the error as a value). Their lines
/// would break the one-line-per-problem output and the progress bar, so the
/// commands that decode call `divertLibraryOutput` once at start: imgwarm's
/// own messages go on to a duplicate of the original stderr (`file`, `fd`),
/// and the process's fd 2, where the libraries write, becomes a pipe read by
/// one thread. That thread drops the libraries' lines, shows them prefixed
/// under `--verbose`, and always passes on what looks like a crash report
/// of imgwarm itself, so a crash is never silent.
public enum ErrorOutput {
    /// Where imgwarm writes its own diagnostics.
    public private(set) nonisolated(unsafe) static var file: UnsafeMutablePointer<FILE> = stderr
    /// The descriptor behind `file` (for isatty and the terminal width).
    public private(set) nonisolated(unsafe) static var fd: Int32 = STDERR_FILENO
    private nonisolated(unsafe) static var diverted = false

    /// Lines that are passed on even without `--verbose`: the Swift
    /// runtime's fatal-error and crash reports.
    static func isCrashReport(_ line: String) -> Bool {
        line.contains("Fatal error") || line.contains("Program crashed") || line.contains("Stack dump")
            || line.hasPrefix("Crash") || line.contains("Backtrace")
    }

    /// The text shown for one line a library wrote, or nil to drop it.
    /// Escaped: a decoder's message may quote bytes of the image.
    static func forwardedLine(_ line: String, verbose: Bool) -> String? {
        if isCrashReport(line) { return TerminalText.escaped(line) }
        return verbose ? "imgwarm: decoder library: " + TerminalText.escaped(line) : nil
    }

    /// Moves fd 2 to a pipe as described above. Once per process; does
    /// nothing (and keeps writing to the real stderr) when the pipe or the
    /// duplicate cannot be made.
    public static func divertLibraryOutput(verbose: Bool) {
        guard !diverted else { return }
        // The duplicate is close-on-exec from the start (F_DUPFD_CLOEXEC).
        let saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0)
        guard saved >= 0 else { return }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(saved)
            return
        }
        guard let savedFile = fdopen(saved, "w") else {
            close(saved)
            close(ends[0]); close(ends[1])
            return
        }
        // Only a child process would inherit the read end; imgwarm starts
        // none, so a failure here changes nothing worth reporting.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        setvbuf(savedFile, nil, _IOLBF, 0)
        fflush(stderr)
        guard dup2(ends[1], STDERR_FILENO) >= 0 else {
            fclose(savedFile)
            close(ends[0]); close(ends[1])
            return
        }
        close(ends[1])
        file = savedFile
        fd = saved
        diverted = true
        let readEnd = ends[0]
        // The reader thread writes each line with write(2) on the saved
        // descriptor (a plain Int32) rather than through `savedFile`: a
        // FILE pointer is not Sendable, and a line in one write(2) lands
        // whole between imgwarm's own lines, which `file` (line-buffered
        // on the same descriptor) also writes a line at a time.
        let thread = Thread {
            var pending = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, 4096) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                pending += buffer[0..<n]
                while let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<nl], as: UTF8.self)
                    pending.removeSubrange(...nl)
                    if let out = forwardedLine(line, verbose: verbose) { writeLine(out, to: saved) }
                }
            }
        }
        thread.name = "library-stderr"
        thread.start()
    }

    /// Writes `line` and a newline to `fd` in one write(2), resuming after
    /// a signal or a short write; gives up on any other error (stderr gone).
    static func writeLine(_ line: String, to fd: Int32) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Puts the original stderr back on fd 2 (closing the pipe's write end,
    /// so the reader thread ends), for messages printed after the command's
    /// work, such as the argument parser's.
    public static func restore() {
        guard diverted else { return }
        fflush(stderr)
        fflush(file)
        dup2(fd, STDERR_FILENO)
        diverted = false
    }
}
