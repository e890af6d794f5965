#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport

/// How `cache prune` prints a `PruneResult`: a summary line, or one JSON
/// object. Written through a sink line by line, so a dry run over a million
/// files streams its list instead of building one huge string.
public enum PruneReport {
    /// `removed 12 files (3.4 MiB: 10 expired, 2 trimmed), kept 100 files (20.0 MiB, 3 pinned)`.
    public static func summary(_ r: PruneResult) -> String {
        var line = (r.dryRun ? "would remove " : "removed ")
            + "\(r.removedFiles) \(files(r.removedFiles)) (\(Units.formatBytes(r.removedBytes)): "
            + "\(r.expired) expired, \(r.trimmed) trimmed" + (r.unindexed > 0 ? ", \(r.unindexed) unindexed" : "") + "), "
            + "kept \(r.keptFiles) \(files(r.keptFiles)) (\(Units.formatBytes(r.keptBytes))"
        if r.pinnedFiles > 0 { line += ", \(r.pinnedFiles) pinned" }
        if r.renewed > 0 { line += ", \(r.renewed) renewed since the scan" }
        line += ")"
        if r.vanished > 0 { line += ", \(r.vanished) already gone" }
        if r.rebuiltJournal { line += "; journal rebuilt" }
        return line
    }

    /// Dry-run lines: `expired  PATH`, `trimmed #RANK  PATH` or
    /// `unindexed  PATH`, in removal order.
    public static func listing(_ r: PruneResult, _ write: (String) -> Void) {
        for removal in r.removals {
            let label = removal.reason == .trimmed ? "trimmed #\(removal.rank)" : removal.reason.rawValue
            // A name in a shared folder is anyone's text: escaped like server bytes.
            write("\(label)  \(TerminalText.escaped(r.path(of: removal)))")
        }
    }

    /// Warnings for stderr: things the run could not do, each one line.
    public static func warnings(_ r: PruneResult) -> [String] {
        var out: [String] = []
        if let e = r.firstDirectoryError {
            out.append("\(e.description)" + (r.unreadableDirectories > 1 ? " (and \(r.unreadableDirectories - 1) more folders): skipped" : ": skipped"))
        }
        if r.trimTargetReached == false, let target = r.trimTarget {
            out.append("cannot trim below \(Units.formatBytes(target)): " + whatRemains(r))
        }
        return out
    }

    /// Why a trim stopped above its target: what is left, by cause (every
    /// file that could go was gone or judged by then). Only the causes that
    /// hold: "pinned files alone" was said with nothing pinned.
    static func whatRemains(_ r: PruneResult) -> String {
        var causes: [String] = []
        if r.pinnedFiles > 0 {
            causes.append("\(r.pinnedFiles) pinned \(files(r.pinnedFiles)) (\(Units.formatBytes(r.pinnedBytes)))")
        }
        if r.renewed > 0 { causes.append("\(r.renewed) \(files(r.renewed)) renewed since the scan") }
        if r.failed > 0 { causes.append("\(r.failed) \(files(r.failed)) that could not be removed") }
        if causes.isEmpty { causes.append("files no longer due") }
        return "\(Units.formatBytes(r.keptBytes)) remain" + ": " + causes.joined(separator: ", ")
    }

    /// The JSON object, the same for every layout: the summary, then with
    /// `includeFiles` a `files` array of `{"path", "reason", "rank"
    /// (trimmed only), "bytes", "date"}`, paths relative to the cache folder.
    public static func json(_ r: PruneResult, includeFiles: Bool, _ write: (String) -> Void) {
        var head = "{\n"
        func field(_ name: String, _ value: String) { head += "  \"\(name)\": \(value),\n" }
        field("dry_run", r.dryRun ? "true" : "false")
        field("layout", quoted(r.layout))
        field("expire_type", r.expireType.map { quoted($0.rawValue) } ?? "null")
        field("trim_date", r.trimDate.map { quoted($0.rawValue) } ?? "null")
        field("size_measure", quoted(r.sizeMeasure.rawValue))
        field("expiration_date", r.expirationDate.map { quoted(iso8601($0)) } ?? "null")
        field("max_size", r.maxSize.map { String($0) } ?? "null")
        field("trim_target", r.trimTarget.map { String($0) } ?? "null")
        field("removed_files", String(r.removedFiles))
        field("removed_bytes", String(r.removedBytes))
        field("kept_files", String(r.keptFiles))
        field("kept_bytes", String(r.keptBytes))
        field("expired", String(r.expired))
        field("trimmed", String(r.trimmed))
        field("unindexed", String(r.unindexed))
        field("pinned_files", String(r.pinnedFiles))
        field("pinned_bytes", String(r.pinnedBytes))
        field("undated_files", String(r.undatedFiles))
        field("renewed", String(r.renewed))
        field("vanished", String(r.vanished))
        field("failed", String(r.failed))
        field("rebuilt_journal", r.rebuiltJournal ? "true" : "false")
        if !includeFiles {
            head.removeLast(2)  // the last ",\n"
            write(head + "\n}")
            return
        }
        write(head + "  \"files\": [")
        let count = r.removals.count
        for (i, removal) in r.removals.enumerated() {
            var item = "    {\"path\": \(quoted(r.path(of: removal))), \"reason\": \"\(removal.reason.rawValue)\""
            if removal.reason == .trimmed { item += ", \"rank\": \(removal.rank)" }
            item += ", \"bytes\": \(r.bytes(of: removal)), \"date\": "
            item += r.date(of: removal).map { quoted(iso8601($0)) } ?? "null"
            item += i == count - 1 ? "}" : "},"
            write(item)
        }
        write("  ]\n}")
    }

    private static func files(_ n: Int) -> String { n == 1 ? "file" : "files" }

    /// A JSON string literal. File names are bytes; ones that are not UTF-8
    /// were repaired (U+FFFD) when read.
    static func quoted(_ s: String) -> String { JSON.string(s) }

    /// `2026-11-22T07:14:08.123456789Z` with gmtime_r: fast enough for a
    /// million lines, where a Foundation formatter per line is not.
    static func iso8601(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds - 999_999_999) / 1_000_000_000)
        let fraction = nanoseconds - Int64(seconds) * 1_000_000_000
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        var text = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
        if fraction != 0 {
            let f = String(fraction)
            text += "." + String(repeating: "0", count: 9 - f.count) + f
        }
        return text + "Z"
    }
}
