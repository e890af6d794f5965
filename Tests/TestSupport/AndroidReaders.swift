import Foundation
import Testing

/// OkHttp's DiskLruCache (Debian's libokhttp-java, OkHttp 3.13) run on a
/// folder through `Tests/AndroidReader/DiskLruRead.java`: a reader of
/// Glide's and Coil's journal format that nobody here wrote. Compiled once
/// per test process with `javac`.
public struct DiskLruReader: Sendable {
    public struct Value: Equatable, Sendable {
        /// The length the journal's CLEAN line gives.
        public var journalLength: Int
        /// The bytes OkHttp read back, and their SHA-256.
        public var length: Int
        public var sha256: String
    }

    public struct Reading: Sendable {
        /// Key -> its values, as OkHttp's `snapshots()` returned them.
        public var entries: [String: [Value]]
        public var status: Int32
        public var stderr: String
    }

    let java: String
    let classpath: String

    /// The reader, or nil when java, javac or the jars are missing (under
    /// CI=true the calling test then fails, see `neededTool`).
    public static var shared: DiskLruReader? { compiled.value }

    /// The reader, or nil after a visible note (a failure under CI=true),
    /// as `neededTool` does for a missing tool.
    public static func needed(sourceLocation: SourceLocation = #_sourceLocation) -> DiskLruReader? {
        if let reader = shared { return reader }
        let what = "javac/java, libokhttp-java or libokio-java not found: reading with OkHttp's DiskLruCache did not run"
        if isCI {
            Issue.record(Comment(rawValue: what + " (CI=true: scripts/setup.sh installs them)"), sourceLocation: sourceLocation)
        } else {
            print("note: skipped: \(what) (run scripts/setup.sh)")
        }
        return nil
    }

    /// The jars of a Debian package, from its file list.
    static func jar(_ package: String, named name: String) -> String? {
        guard let dpkg = findTool("dpkg-query"), let list = runTool(dpkg, ["-L", package]), list.status == 0 else { return nil }
        return list.output.split(separator: "\n").map(String.init).first { $0.hasSuffix("/" + name) }
    }

    static let compiled = Lazy<DiskLruReader?> {
        guard let javac = findTool("javac"), let java = findTool("java"),
              let okhttp = jar("libokhttp-java", named: "okhttp.jar"),
              let okio = jar("libokio-java", named: "okio.jar") else { return nil }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AndroidReader/DiskLruRead.java").path
        let out = makeTempDirectory("imgwarm-disklru-reader")
        let classpath = "\(okhttp):\(okio)"
        guard let result = runTool(javac, ["-cp", classpath, "-d", out, source]), result.status == 0 else {
            print("note: javac failed: \(runTool(javac, ["-cp", classpath, "-d", out, source])?.output ?? "")")
            return nil
        }
        return DiskLruReader(java: java, classpath: "\(out):\(classpath)")
    }

    /// Opens `directory` as OkHttp does with the library's app version and
    /// value count, and reads every entry back.
    public func read(_ directory: String, appVersion: Int, valueCount: Int) throws -> Reading {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: java)
        p.arguments = ["-cp", classpath, "DiskLruRead", directory, String(appVersion), String(valueCount)]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let errData = Lazy<Data> { err.fileHandleForReading.readDataToEndOfFile() }
        let reader = Thread { _ = errData.value }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        var entries: [String: [Value]] = [:]
        for line in String(decoding: outData, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            var values: [Value] = []
            var i = 1
            while i + 2 < fields.count {
                values.append(Value(journalLength: Int(fields[i]) ?? -1, length: Int(fields[i + 1]) ?? -1, sha256: fields[i + 2]))
                i += 3
            }
            entries[fields[0]] = values
        }
        return Reading(entries: entries, status: p.terminationStatus, stderr: String(decoding: errData.value, as: UTF8.self))
    }
}

/// A value computed once, on first use, from any thread.
public final class Lazy<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var computed: T?
    private let make: () -> T
    public init(_ make: @escaping () -> T) { self.make = make }
    public var value: T {
        lock.lock()
        defer { lock.unlock() }
        if let computed { return computed }
        let v = make()
        computed = v
        return v
    }
}

/// Runs `python3` with a script (its sqlite3 module: SQLite as Python
/// links it, independent of GRDB) and returns stdout; nil without python3.
public func runPython(_ script: String, _ args: [String]) -> (status: Int32, output: String)? {
    guard let python = findTool("python3") else { return nil }
    let file = NSTemporaryDirectory() + "imgwarm-py-\(UUID().uuidString.prefix(8)).py"
    guard FileManager.default.createFile(atPath: file, contents: Data(script.utf8)) else { return nil }
    defer { try? FileManager.default.removeItem(atPath: file) }
    return runTool(python, [file] + args)
}
