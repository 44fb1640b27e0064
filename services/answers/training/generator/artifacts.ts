// What tickets paste besides prose: versions, environment blocks, stack traces, logs,
// code and commands. Generated with random names and numbers so that no single trace
// or version is learned; the shapes are what tickets of every kind share.
import type { Rand } from './rng.js';

export type Lang = 'python' | 'js' | 'cpp' | 'java' | 'go' | 'csharp' | 'none';

const WORDS = [
  'user',
  'config',
  'model',
  'data',
  'image',
  'buffer',
  'session',
  'handler',
  'cache',
  'worker',
  'parser',
  'render',
  'loader',
  'request',
  'item',
  'node',
  'tree',
  'index',
  'stream',
  'frame',
  'token',
  'layer',
  'batch',
  'event',
  'queue',
  'store',
  'state',
  'file',
  'path',
  'result',
  'client',
  'server',
  'task',
  'view',
  'widget',
  'block',
  'chunk',
  'entry',
  'record',
  'graph',
];
const VERBS = [
  'get',
  'load',
  'parse',
  'update',
  'read',
  'write',
  'create',
  'handle',
  'process',
  'build',
  'init',
  'apply',
  'run',
  'resolve',
  'compute',
  'fetch',
  'decode',
  'encode',
  'flush',
  'dispatch',
];
const OSES = [
  'Ubuntu 22.04',
  'Ubuntu 20.04 LTS',
  'Windows 11 Pro 23H2',
  'Windows 10 (x64)',
  'macOS Sonoma 14.2.1',
  'macOS 13.5 (Apple M2)',
  'Debian 12',
  'Fedora 39',
  'Arch Linux (kernel 6.6.8)',
  'CentOS 7',
  'Pop!_OS 22.04',
  'Linux Mint 21',
  'WSL2 (Ubuntu 22.04)',
  'Windows Server 2019',
  'Raspberry Pi OS 64-bit',
  'FreeBSD 14.0',
];
const BROWSERS = [
  'Chrome 120.0.6099.129',
  'Firefox 121.0',
  'Safari 17.2',
  'Edge 120',
  'Chrome 119 (mobile)',
  'Brave 1.61',
];
const HARDWARE = [
  'Intel i7-12700H, 32 GB RAM',
  'AMD Ryzen 9 5900X, 64 GB RAM',
  'Apple M1 Pro, 16 GB',
  'NVIDIA RTX 3090, driver 535.104',
  'NVIDIA T4 (Colab)',
  '8 GB RAM, SSD',
  'Intel Xeon, 128 GB RAM, no GPU',
  'NVIDIA GTX 1080 Ti, CUDA 11.8',
];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const camel = (r: Rand) => `${r.pick(VERBS)}${cap(r.pick(WORDS))}`;
const pascal = (r: Rand) => `${cap(r.pick(WORDS))}${cap(r.pick(WORDS))}`;
const snake = (r: Rand) => `${r.pick(VERBS)}_${r.pick(WORDS)}`;
const hex = (r: Rand, n: number) =>
  Array.from({ length: n }, () => '0123456789abcdef'[r.int(0, 15)]).join('');

/** A version number in one of the shapes projects use. */
export function version(r: Rand): string {
  const [a, b, c] = [r.int(0, 5), r.int(0, 30), r.int(0, 20)];
  switch (r.int(0, 6)) {
    case 0:
      return `v${a}.${b}.${c}`;
    case 1:
      return `${a}.${b}`;
    case 2:
      return `${a}.${b}.${c}-rc.${r.int(1, 4)}`;
    case 3:
      return `${a + 20}.${r.int(1, 12)}.${c}`;
    case 4:
      return `${a}.${b}.${c}.dev${r.int(2020, 2024)}${r.int(10, 12)}${r.int(10, 28)}`;
    default:
      return `${a}.${b}.${c}`;
  }
}

export const os = (r: Rand) => r.pick(OSES);
export const browser = (r: Rand) => r.pick(BROWSERS);

/** An environment block, in one of the layouts issue templates and people use. */
export function envBlock(r: Rand, lang: Lang, product = 'Version'): string {
  const runtime: Record<Lang, () => string> = {
    python: () => `Python ${r.pick(['3.8.10', '3.9.18', '3.10.12', '3.11.7', '3.12.1'])}`,
    js: () => `Node.js ${r.pick(['16.20.2', '18.19.0', '20.10.0', '21.5.0'])}`,
    cpp: () =>
      `${r.pick(['GCC 11.4.0', 'GCC 13.2', 'Clang 16.0.6', 'MSVC 19.38', 'Apple clang 15.0'])}`,
    java: () => `${r.pick(['OpenJDK 17.0.9', 'Java 11', 'Android SDK 34', 'Kotlin 1.9.21'])}`,
    go: () =>
      `go${r.pick(['1.20.12', '1.21.5', '1.22rc1'])} ${r.pick(['linux/amd64', 'darwin/arm64', 'windows/amd64'])}`,
    csharp: () => `${r.pick(['.NET 8.0.100', '.NET 6', 'Mono 6.12', '.NET Framework 4.8'])}`,
    none: () => `Browser: ${browser(r)}`,
  };
  const fields: Array<[string, string]> = [
    [r.pick(['OS', 'Operating system', 'OS version', 'Platform']), os(r)],
    [product, version(r)],
    [r.pick(['Runtime', 'Environment', 'Language version']), runtime[lang]()],
  ];
  if (r.chance(0.4)) fields.push([r.pick(['Hardware', 'Machine', 'GPU']), r.pick(HARDWARE)]);
  if (r.chance(0.3))
    fields.push([
      'Installed from',
      r.pick([
        'pip',
        'source',
        'conda',
        'the official installer',
        'Homebrew',
        'apt',
        'a Docker image',
        'binary release',
      ]),
    ]);
  if (r.chance(0.2)) fields.push(['Commit', hex(r, 40)]);
  switch (r.int(0, 4)) {
    case 0:
      return fields.map(([k, v]) => `- ${k}: ${v}`).join('\n');
    case 1:
      return fields.map(([k, v]) => `**${k}**: ${v}`).join('\n');
    case 2:
      return fields.map(([k, v]) => `${k} => ${v}`).join('\n');
    case 3:
      return fields.map(([k, v]) => `| ${k} | ${v} |`).join('\n');
    default:
      return `${fields.map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  }
}

function frames<T>(r: Rand, n: [number, number], make: () => T): T[] {
  return Array.from({ length: r.int(n[0], n[1]) }, make);
}

/** A stack trace or crash dump of the language, ending (or starting) with `message`. */
export function stackTrace(r: Rand, lang: Lang, message: string): string {
  const dir = r.pick(['src', 'lib', 'app', 'core', 'pkg', 'internal', 'modules']);
  switch (lang) {
    case 'python': {
      const site = r.pick([
        '/usr/lib/python3/dist-packages',
        '/home/user/.venv/lib/python3.10/site-packages',
        'C:\\Users\\me\\anaconda3\\lib\\site-packages',
        '/opt/conda/lib/python3.11/site-packages',
      ]);
      const body = frames(
        r,
        [2, 6],
        () =>
          `  File "${r.chance(0.4) ? 'main.py' : `${site}/${r.pick(WORDS)}/${r.pick(WORDS)}.py`}", line ${r.int(10, 2000)}, in ${snake(r)}\n    ${snake(r)}(${r.pick(WORDS)})`,
      );
      return `Traceback (most recent call last):\n${body.join('\n')}\n${message}`;
    }
    case 'js': {
      const body = frames(
        r,
        [3, 8],
        () =>
          `    at ${r.chance(0.7) ? camel(r) : `${pascal(r)}.${camel(r)}`} (${r.pick(['webpack://', '/app/node_modules/', 'file:///C:/proj/', 'internal/', '/home/dev/project/'])}${dir}/${r.pick(WORDS)}.${r.pick(['js', 'ts', 'mjs', 'jsx'])}:${r.int(1, 900)}:${r.int(1, 80)})`,
      );
      return `${/^(Uncaught )?\w*(Error|Warning)/.test(message) ? message : `Uncaught Error: ${message}`}\n${body.join('\n')}`;
    }
    case 'java': {
      const pkg = `${r.pick(['com', 'org', 'io'])}.${r.pick(WORDS)}.${r.pick(WORDS)}`;
      const body = frames(r, [3, 9], () => {
        const cls = pascal(r);
        return `\tat ${pkg}.${cls}.${camel(r)}(${cls}.java:${r.int(10, 700)})`;
      });
      const ex = /^[\w.]+(Exception|Error)/.test(message)
        ? message
        : `java.lang.RuntimeException: ${message}`;
      return `${r.chance(0.5) ? 'Exception in thread "main" ' : ''}${ex}\n${body.join('\n')}`;
    }
    case 'go': {
      const body = frames(
        r,
        [2, 6],
        () =>
          `${r.pick(WORDS)}.${pascal(r)}(0x${hex(r, 8)}, 0x${hex(r, 4)})\n\t/home/runner/work/${dir}/${r.pick(WORDS)}.go:${r.int(10, 800)} +0x${hex(r, 3)}`,
      );
      return `${message.startsWith('panic') ? message : `panic: ${message}`}\n\ngoroutine ${r.int(1, 300)} [running]:\n${body.join('\n')}`;
    }
    case 'csharp': {
      const ns = `${pascal(r)}.${cap(r.pick(WORDS))}`;
      const body = frames(
        r,
        [2, 7],
        () =>
          `  at ${ns}.${pascal(r)}.${pascal(r)} () [0x000${r.int(10, 99)}] in ${r.pick(['C:\\Projects\\Game\\Assets\\Scripts', '/Users/dev/Game/Assets'])}\\${pascal(r)}.cs:${r.int(10, 400)}`,
      );
      return `${message}\n${body.join('\n')}`;
    }
    case 'cpp': {
      if (r.chance(0.5)) {
        const body = frames(
          r,
          [3, 9],
          () =>
            `#${r.int(0, 20)}  0x0000${hex(r, 12)} in ${r.pick(WORDS)}::${pascal(r)}::${camel(r)}() at ${dir}/${r.pick(WORDS)}.cpp:${r.int(10, 3000)}`,
        );
        return `${message}\n\n${r.pick(['Thread 1 "main" received signal SIGSEGV, Segmentation fault.', 'Program received signal SIGABRT, Aborted.', '(gdb) bt'])}\n${body.join('\n')}`;
      }
      const body = frames(
        r,
        [3, 8],
        () =>
          `${r.int(0, 20)}  ${r.pick(['libcore.so', 'app', 'libstdc++.so.6', 'libc.so.6', 'module.dll'])}  0x0000${hex(r, 12)} ${r.pick(WORDS)}::${camel(r)} + ${r.int(10, 900)}`,
      );
      return `${message}\n${body.join('\n')}`;
    }
    default:
      return `${message}\n    at ${camel(r)} (https://app.example.com/static/js/main.${hex(r, 8)}.js:2:${r.int(1000, 99999)})`;
  }
}

/** A few lines of timestamped log output around `message`. */
export function logLines(r: Rand, message: string): string {
  const base = new Date(
    Date.UTC(2020 + r.int(0, 4), r.int(0, 11), r.int(1, 28), r.int(0, 23), r.int(0, 59)),
  );
  const level = () => r.pick(['INFO', 'DEBUG', 'WARN', 'info', 'I', 'W']);
  const noise = () =>
    r.pick([
      `${r.pick(VERBS)}ing ${r.pick(WORDS)} ${r.int(1, 999)}`,
      `connected to ${r.int(10, 192)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)}:${r.int(1024, 65000)}`,
      `loaded ${r.int(2, 400)} ${r.pick(WORDS)}s in ${r.int(1, 900)} ms`,
      `${r.pick(WORDS)} ${hex(r, 8)} ready`,
      `using ${r.pick(WORDS)} cache at /var/tmp/${r.pick(WORDS)}`,
    ]);
  const lines: string[] = [];
  const n = r.int(2, 8);
  const at = r.int(0, n);
  for (let i = 0; i <= n; i++) {
    const t = new Date(base.getTime() + i * r.int(10, 4000))
      .toISOString()
      .replace('T', ' ')
      .slice(0, 23);
    lines.push(
      i === at
        ? `${t} ${r.pick(['ERROR', 'E', 'FATAL', 'error'])} ${message}`
        : `${t} ${level()} ${noise()}`,
    );
  }
  return lines.join('\n');
}

const SNIPPETS: Record<Exclude<Lang, 'none'>, Array<(r: Rand) => string>> = {
  python: [
    (r) =>
      `import ${r.pick(WORDS)}lib as ${r.pick(['lib', 'tf', 'cv', 'np', 'pd'])}\n\n${r.pick(WORDS)} = ${r.pick(['lib', 'tf', 'cv'])}.${snake(r)}("${r.pick(WORDS)}.${r.pick(['png', 'csv', 'h5', 'json'])}")\nresult = ${snake(r)}(${r.pick(WORDS)}, ${r.pick(['axis=1', 'batch_size=32', 'verbose=True', 'dtype="float32"'])})\nprint(result.shape)`,
    (r) =>
      `def ${snake(r)}(${r.pick(WORDS)}):\n    ${r.pick(WORDS)} = ${r.pick(WORDS)}.${snake(r)}()\n    for ${r.pick(['x', 'i', 'item'])} in ${r.pick(WORDS)}s:\n        yield ${r.pick(['x', 'i', 'item'])} * ${r.int(2, 255)}\n\nmodel.fit(${snake(r)}(data), epochs=${r.int(1, 50)})`,
    (r) =>
      `class ${pascal(r)}(Layer):\n    def __init__(self, units=${r.int(8, 512)}):\n        super().__init__()\n        self.units = units\n\n    def call(self, inputs):\n        return ${snake(r)}(inputs) + self.bias`,
  ],
  js: [
    (r) =>
      `function ${pascal(r)}({ ${r.pick(WORDS)} }) {\n  const [${r.pick(WORDS)}, set${pascal(r)}] = useState(${r.pick(['null', '0', '[]', "''"])});\n  useEffect(() => {\n    ${camel(r)}(${r.pick(WORDS)}).then(set${pascal(r)});\n  }, [${r.pick(WORDS)}]);\n  return <div>{${r.pick(WORDS)}}</div>;\n}`,
    (r) =>
      `const ${r.pick(WORDS)} = require('${r.pick(WORDS)}');\n\n${r.pick(WORDS)}.${camel(r)}({ ${r.pick(WORDS)}: ${r.pick(['true', '42', "'auto'"])} })\n  .then((res) => console.log(res.${r.pick(WORDS)}))\n  .catch(console.error);`,
    (r) =>
      `{\n  "${r.pick(['editor', 'files', 'terminal', 'search'])}.${camel(r)}": ${r.pick(['true', 'false', '"on"', '200', '"bash"'])},\n  "${r.pick(['editor', 'workbench'])}.${camel(r)}": ${r.pick(['true', '"off"', '14'])}\n}`,
  ],
  cpp: [
    (r) =>
      `#include <${r.pick(WORDS)}.hpp>\n\nint main() {\n    cv::Mat ${r.pick(WORDS)} = cv::imread("${r.pick(WORDS)}.png", ${r.pick(['cv::IMREAD_UNCHANGED', '0', '-1'])});\n    ${r.pick(WORDS)}::${camel(r)}(${r.pick(WORDS)}, ${r.int(1, 64)});\n    return 0;\n}`,
    (r) =>
      `auto ${r.pick(WORDS)} = std::make_unique<${pascal(r)}>(${r.int(1, 16)});\nfor (size_t i = 0; i < ${r.pick(WORDS)}.size(); ++i) {\n    ${r.pick(WORDS)}->${camel(r)}(i);\n}`,
    (r) =>
      `$ ${r.pick(['cmake -DCMAKE_BUILD_TYPE=Release ..', './configure --without-gui', 'make -j8', 'cmake --build . --config Release'])}\n-- The CXX compiler identification is GNU ${r.int(9, 13)}.${r.int(1, 4)}.0\n[ ${r.int(10, 99)}%] Building CXX object ${r.pick(WORDS)}/CMakeFiles/${r.pick(WORDS)}.dir/${r.pick(WORDS)}.cpp.o`,
  ],
  java: [
    (r) =>
      `${pascal(r)} ${r.pick(WORDS)} = new ${pascal(r)}(context);\n${r.pick(WORDS)}.${camel(r)}(${r.pick(['true', 'null', '"id"'])});\nLog.d(TAG, "${r.pick(WORDS)}: " + ${r.pick(WORDS)}.${camel(r)}());`,
    (r) =>
      `@Override\nprotected void onCreate(Bundle savedInstanceState) {\n    super.onCreate(savedInstanceState);\n    ${camel(r)}(${r.pick(WORDS)});\n}`,
  ],
  go: [
    (r) =>
      `client, err := ${r.pick(WORDS)}.NewClient(ctx, ${r.pick(WORDS)}.With${pascal(r)}(${r.int(1, 30)}))\nif err != nil {\n    log.Fatal(err)\n}\nres, err := client.${pascal(r)}(ctx, &${pascal(r)}Input{Name: "${r.pick(WORDS)}"})`,
    (r) =>
      `$ ${r.pick(['tool install', 'tool build ./...', 'tool publish --tag next', 'tool run test'])}\n${r.pick(WORDS)}: ${r.pick(['resolving', 'fetching', 'linking'])} ${r.int(10, 900)} packages\n${r.pick(['done', 'warning: 3 deprecated packages', 'error'])}`,
  ],
  csharp: [
    (r) =>
      `void ${pascal(r)}() {\n    var ${r.pick(WORDS)} = GetComponent<${pascal(r)}>();\n    ${r.pick(WORDS)}.${pascal(r)}(transform.position, ${r.int(1, 10)}f);\n}`,
  ],
};

/** A fenced code block of the language (a config or command when it has none). */
export function codeBlock(r: Rand, lang: Lang): string {
  if (lang === 'none') {
    return `\`\`\`\n${r.pick(['GET', 'POST'])} /api/v${r.int(1, 3)}/${r.pick(WORDS)}s?${r.pick(WORDS)}=${r.int(1, 999)}\nAuthorization: Bearer ****\n\`\`\``;
  }
  const tag: Record<Exclude<Lang, 'none'>, string> = {
    python: 'python',
    js: r.pick(['js', 'jsx', 'json', 'javascript']),
    cpp: r.pick(['cpp', 'c++', 'sh']),
    java: r.pick(['java', 'kotlin']),
    go: r.pick(['go', 'sh', 'console']),
    csharp: 'csharp',
  };
  return `\`\`\`${r.chance(0.8) ? tag[lang] : ''}\n${r.pick(SNIPPETS[lang])(r)}\n\`\`\``;
}

/** An error as people paste it: fenced or not, trace or log or the bare message. */
export function pastedError(r: Rand, lang: Lang, message: string): string {
  const kind = r.weighted({ trace: 5, log: 2, bare: 2 });
  const body =
    kind === 'trace'
      ? stackTrace(r, lang, message)
      : kind === 'log'
        ? logLines(r, message)
        : message;
  return r.chance(0.75)
    ? `\`\`\`${r.chance(0.3) ? r.pick(['text', 'console', 'shell', 'log']) : ''}\n${body}\n\`\`\``
    : body;
}

export const identifier = (r: Rand) => r.pick([camel(r), snake(r), pascal(r)]);
