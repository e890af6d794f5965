import Foundation

/// Runs the real `imgwarm` binary, as a user or a CI job would.
struct BinaryRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var signalled: Bool
    }

    /// The `imgwarm` executable built next to the test bundle.
    static let executable: String = {
        var candidates: [String] = []
        if let exe = Bundle.main.executablePath {
            candidates.append((exe as NSString).deletingLastPathComponent + "/imgwarm")
        }
        let args0 = CommandLine.arguments[0]
        var dir = (args0 as NSString).deletingLastPathComponent
        for _ in 0..<4 {
            candidates.append(dir + "/imgwarm")
            dir = (dir as NSString).deletingLastPathComponent
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        candidates.append(root + "/.build/debug/imgwarm")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }()

    static let examplesDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/examples"
    }()

    /// Runs `imgwarm args...`; `stdin` is written to its standard input.
    /// Killed after `timeout` seconds so a hang fails the test instead of CI.
    @discardableResult
    static func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:], timeout: Double = 120) throws -> Result {
        let p = try start(args, stdin: stdin, environment: environment)
        return p.wait(timeout: timeout)
    }

    static func start(_ args: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        let running = Running(process: process, out: out, err: err)
        try process.run()
        running.startReading()
        if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        return running
    }

    final class Running: @unchecked Sendable {
        let process: Process
        private let out: Pipe
        private let err: Pipe
        private var outData = Data()
        private var errData = Data()
        private let group = DispatchGroup()

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            self.err = err
        }

        func startReading() {
            group.enter()
            DispatchQueue.global().async {
                self.outData = self.out.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
            group.enter()
            DispatchQueue.global().async {
                self.errData = self.err.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
        }

        func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

        func wait(timeout: Double) -> Result {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            group.wait()
            return Result(status: process.terminationStatus,
                          stdout: String(decoding: outData, as: UTF8.self),
                          stderr: String(decoding: errData, as: UTF8.self),
                          signalled: process.terminationReason == .uncaughtSignal)
        }
    }
}
