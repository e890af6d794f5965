#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ImgWarmSupport

/// The live progress of a run on stderr: a redrawn bar on a terminal, or a
/// plain line every few seconds for CI logs.
///
/// Every frame of the bar, every line printed above it and the clearing
/// of it go out in one write(2) on `ErrorOutput.fd`, never through a FILE
/// buffer: `ErrorOutput.file` is line-buffered, so a bar (which ends in no
/// newline) sat in its buffer and reached the terminal in 4 KiB bursts, cut
/// mid-line, the first after seconds, and the summary (on stdout) was glued
/// to a stale piece of it (`22/24 91% | 22 downlo24 entries: ...`).
// @unchecked Sendable: `barVisible` only under `lock`; `timer` set and cancelled by the run's thread only (start, stop).
public final class ProgressPrinter: @unchecked Sendable {
    public enum Mode: String, CaseIterable, Sendable {
        case auto, bar, lines, none
    }

    private let mode: Mode
    private let ledger: any RunTotals
    private var timer: DispatchSourceTimer?
    private let lock = NSLock()
    private var barVisible = false
    public let lineInterval: Double
    /// Seconds between two frames of the bar: steady, about 10 a second,
    /// so the numbers move without flooding a slow terminal.
    public static let barInterval = 0.1
    /// Moves to the start of the line and erases it.
    static let clearLine = "\r\u{1B}[K"
    /// The download engine's part of the line (`48 in flight, 812 req/s`);
    /// set before `start`.
    public var engineStatus: (@Sendable () -> String)?

    public init(mode: Mode, ledger: any RunTotals, lineInterval: Double = 5) {
        if mode == .auto {
            self.mode = isatty(ErrorOutput.fd) == 1 ? .bar : .lines
        } else {
            self.mode = mode
        }
        self.ledger = ledger
        self.lineInterval = lineInterval
    }

    public func start() {
        guard mode != .none else { return }
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        let interval = mode == .bar ? Self.barInterval : lineInterval
        // The first frame at once: a run that takes seconds shows it moving
        // from its start.
        t.schedule(deadline: .now() + (mode == .bar ? 0 : interval), repeating: interval)
        t.setEventHandler { [weak self] in self?.tick() }
        lock.lock()
        timer = t
        lock.unlock()
        t.resume()
    }

    /// Prints a line above the bar (a failure, a verbose entry): the bar
    /// is erased, the line written, the bar redrawn below it, in one write.
    /// The line holds server and manifest text: escaped here, the one sink
    /// (`TerminalText`).
    public func printLine(_ line: String) {
        let text = TerminalText.escaped(line)
        lock.lock()
        defer { lock.unlock() }
        var s = ""
        if barVisible { s += Self.clearLine }
        s += text + "\n"
        if barVisible { s += barText() }
        Self.write(s)
    }

    /// Stops drawing and erases the bar, so that what follows (the
    /// summary, a message) starts on a clean line.
    public func stop() {
        lock.lock()
        let t = timer
        timer = nil
        lock.unlock()
        t?.cancel()
        clear()
    }

    /// Erases the bar now (it is drawn again on the next frame unless
    /// stopped): before the process exits on a second signal.
    public func clear() {
        lock.lock()
        defer { lock.unlock() }
        if barVisible {
            Self.write(Self.clearLine)
            barVisible = false
        }
    }

    private func tick() {
        lock.lock()
        defer { lock.unlock() }
        // stop() cancels the timer, but a frame already under way may
        // come after its clearing: it must not draw a bar again.
        guard timer != nil else { return }
        switch mode {
        case .bar:
            Self.write(Self.clearLine + barText())
            barVisible = true
        case .lines:
            Self.write("imgwarm: " + Self.statusText(ledger.snapshot()) + engineText() + "\n")
        default:
            break
        }
    }

    /// One write(2) of the whole text on imgwarm's stderr, resumed after
    /// a signal or a short write, so a frame is never left half drawn.
    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(ErrorOutput.fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    private func barText() -> String {
        let snap = ledger.snapshot()
        let columns = Self.terminalColumns()
        let status = Self.statusText(snap) + engineText()
        let barWidth = max(10, min(30, columns - status.count - 4))
        let fraction = snap.total == 0 ? 1 : Double(snap.done) / Double(snap.total)
        let filled = Int(fraction * Double(barWidth))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "] "
        let text = bar + status
        return text.count > columns - 1 ? String(text.prefix(columns - 1)) : text
    }

    private func engineText() -> String { engineStatus.map { " | " + $0() } ?? "" }

    /// `1234/5000 24% | 1200 downloaded, 30 cached, 4 failed | 45.2 MiB 12.1 MiB/s | ETA 31s`
    public static func statusText(_ s: RunSnapshot) -> String {
        let done = s.done
        let pct = s.total == 0 ? 100 : done * 100 / s.total
        var parts = ["\(done)/\(s.total) \(pct)%"]
        let counts = [Outcome.downloaded, .cached, .revalidated, .blocked, .failed, .duplicate, .skipped]
            .filter { s[$0] > 0 }.map { "\(s[$0]) \($0.name)" }
        if !counts.isEmpty { parts.append(counts.joined(separator: ", ")) }
        let rate = s.elapsed > 0 ? Double(s.bytesDownloaded) / s.elapsed : 0
        parts.append("\(Units.formatBytes(s.bytesDownloaded)) \(Units.formatBytes(UInt64(rate)))/s")
        let entryRate = s.elapsed > 0 ? Double(done) / s.elapsed : 0
        if done < s.total && entryRate > 0 {
            parts.append("ETA " + formatDuration(Double(s.total - done) / entryRate))
        }
        return parts.joined(separator: " | ")
    }

    public static func formatDuration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m\(String(format: "%02d", s % 60))s" }
        return "\(s / 3600)h\(String(format: "%02d", (s % 3600) / 60))m"
    }

    static func terminalColumns() -> Int {
        var ws = winsize()
        if ioctl(ErrorOutput.fd, UInt(TIOCGWINSZ), &ws) == 0 && ws.ws_col > 0 { return Int(ws.ws_col) }
        return 100
    }

    /// The end-of-run summary: counts per outcome, bytes, elapsed, rate.
    public static func summary(_ s: RunSnapshot, dryRun: Bool = false) -> String {
        var lines: [String] = []
        let counts = Outcome.allCases.filter { $0 != .pending && s[$0] > 0 }.map { o -> String in
            var name = o.name
            if o == .wouldDownload { name = "to download" }
            if o == .wouldRevalidate { name = "to revalidate" }
            // Blocked entries are missing from the cache: say why and how
            // to fetch them.
            if o == .blocked { name = "blocked (failed before: --retry-failed fetches them)" }
            return "\(s[o]) \(name)"
        }
        lines.append((dryRun ? "dry run: " : "") + "\(s.total) \(s.total == 1 ? "entry" : "entries"): " + (counts.isEmpty ? "nothing to do" : counts.joined(separator: ", ")))
        if !s.errors.isEmpty {
            lines.append("errors: " + s.errors.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.value) \($0.key.name ?? "")" }.joined(separator: ", "))
        }
        if !dryRun {
            let rate = s.elapsed > 0 ? Double(s.bytesDownloaded) / s.elapsed : 0
            let entryRate = s.elapsed > 0 ? Double(s.done) / s.elapsed : 0
            lines.append("\(Units.formatBytes(s.bytesDownloaded)) downloaded in \(String(format: "%.2f", s.elapsed))s"
                + " (\(Units.formatBytes(UInt64(rate)))/s, \(String(format: "%.0f", entryRate)) entries/s)")
        }
        return lines.joined(separator: "\n")
    }
}

extension ProgressPrinter {
    /// The summary's last line: where the details are (the report) and,
    /// when entries failed or stayed blocked, the command that lists the
    /// failed URLs. Nil when there is nothing to point to.
    /// `cacheArguments`: the `--cache`/`--layout` of the run, so that the
    /// command shown reads the same cache.
    public static func whereToLook(report: String?, failed: Int, dryRun: Bool, cacheArguments: [String] = []) -> String? {
        var parts: [String] = []
        if let report { parts.append("report: \(report)") }
        if failed > 0 && !dryRun {
            parts.append((["failed URLs: imgwarm cache failed"] + cacheArguments.map(shellQuoted)).joined(separator: " "))
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// A word as a POSIX shell reads it back: as is when it holds only
    /// characters no shell treats specially, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy { c in
            c.properties.isAlphabetic || ("0"..."9").contains(c) || "-_./=:,+@%".unicodeScalars.contains(c)
        }
        return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
