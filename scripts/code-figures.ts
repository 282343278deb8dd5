/**
 * Figures about the code itself, for a maintainer's before → after (docs/development.md): lines per folder,
 * the longest functions, exported names and those nothing else imports, command files over 200 lines and
 * cycles between core/ folders. Reads the sources with the TypeScript compiler; runs nothing.
 *
 *   npx tsx scripts/code-figures.ts [--json] [--unused]
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const PRODUCT = ['core', 'agent', 'lib', 'lambda'];

function sourceFiles(): string[] {
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  return parsed.fileNames.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
}

interface FileFacts {
  readonly path: string;
  readonly lines: number;
  readonly functions: { name: string; lines: number; constructor: boolean }[];
  readonly exports: string[];
  /** Imported names per resolved module path (relative to ROOT); '*' for a namespace or side-effect import. */
  readonly imports: Map<string, Set<string>>;
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    try {
      readFileSync(candidate);
      return relative(ROOT, candidate);
    } catch {
      // not this one
    }
  }
  return undefined;
}

function read(file: string): FileFacts {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const functions: FileFacts['functions'] = [];
  const exports: string[] = [];
  const imports = new Map<string, Set<string>>();
  const named = (node: ts.Node): string => {
    if (ts.isConstructorDeclaration(node)) return `${named(node.parent)}.constructor`;
    const name = (node as { name?: ts.Node }).name;
    if (name && ts.isIdentifier(name)) return name.text;
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const parent = node.parent;
      if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
      if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
      if (ts.isCallExpression(parent)) {
        const chain = parent.expression.getText(source);
        const command = /\.command\('([^']+)'\)/.exec(chain)?.[1];
        const method = ts.isPropertyAccessExpression(parent.expression)
          ? parent.expression.name.text
          : 'call';
        return command ? `(${method} of command '${command}')` : `(callback of ${method})`;
      }
    }
    return '(anonymous)';
  };
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      functions.push({ name: named(node), lines, constructor: ts.isConstructorDeclaration(node) });
    }
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      const spec = node.moduleSpecifier;
      const target = spec && ts.isStringLiteral(spec) ? resolveImport(file, spec.text) : undefined;
      if (target) {
        const names = imports.get(target) ?? new Set<string>();
        imports.set(target, names);
        const clause = ts.isImportDeclaration(node) ? node.importClause : undefined;
        if (ts.isImportDeclaration(node)) {
          const bindings = clause?.namedBindings;
          if (clause?.name) names.add('default');
          if (!clause || (bindings && ts.isNamespaceImport(bindings))) names.add('*');
          if (bindings && ts.isNamedImports(bindings))
            for (const el of bindings.elements) names.add((el.propertyName ?? el.name).text);
        } else {
          const clauseExports = node.exportClause;
          if (!clauseExports) names.add('*');
          else if (ts.isNamedExports(clauseExports))
            for (const el of clauseExports.elements) {
              names.add((el.propertyName ?? el.name).text);
              exports.push(el.name.text);
            }
        }
      }
    }
    const modifiers = ts.canHaveModifiers(node) ? ts.getModifiers(node) : undefined;
    if (modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) && node.parent === source) {
      if (ts.isVariableStatement(node)) {
        for (const d of node.declarationList.declarations)
          if (ts.isIdentifier(d.name)) exports.push(d.name.text);
      } else {
        const name = (node as { name?: ts.Node }).name;
        if (name && ts.isIdentifier(name)) exports.push(name.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { path: relative(ROOT, file), lines: text.split('\n').length - 1, functions, exports, imports };
}

const top = (path: string) => path.split('/')[0];
/** core/<folder> for a file in a folder of core/, core/(files) for one directly in it. */
const coreFolder = (path: string) => {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/(files)`;
};

function figures() {
  const files = sourceFiles().map(read);
  const product = files.filter((f) => PRODUCT.includes(top(f.path)));
  const linesPerFolder: Record<string, number> = {};
  for (const f of product) {
    const key = top(f.path) === 'core' ? coreFolder(f.path) : top(f.path);
    linesPerFolder[key] = (linesPerFolder[key] ?? 0) + f.lines;
  }
  const longest = product
    .flatMap((f) => f.functions.map((fn) => ({ file: f.path, ...fn })))
    .sort((a, b) => b.lines - a.lines);
  const importedNames = new Map<string, Set<string>>();
  for (const f of files)
    for (const [target, names] of f.imports) {
      const all = importedNames.get(target) ?? new Set<string>();
      for (const n of names) all.add(n);
      importedNames.set(target, all);
    }
  const coreFiles = product.filter((f) => top(f.path) === 'core');
  const exported = coreFiles.flatMap((f) => f.exports.map((name) => ({ file: f.path, name })));
  const unused = exported.filter(({ file, name }) => {
    const names = importedNames.get(file);
    return !names || !(names.has(name) || names.has('*'));
  });
  // Edges between core/ folders (a folder importing another), and the cycles among them.
  const edges = new Map<string, Set<string>>();
  for (const f of coreFiles)
    for (const target of f.imports.keys()) {
      if (top(target) !== 'core') continue;
      const [from, to] = [coreFolder(f.path), coreFolder(target)];
      if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  const cycles: string[][] = [];
  for (const [a, targets] of edges)
    for (const b of targets) if (a < b && edges.get(b)?.has(a)) cycles.push([a, b]);
  return {
    linesPerFolder,
    productLines: product.reduce((n, f) => n + f.lines, 0),
    longestFunctions: longest.slice(0, 12),
    functionsOver80: longest.filter((f) => f.lines > 80 && !f.constructor).length,
    commandFilesOver200: product
      .filter((f) => f.path.startsWith('agent/commands/') && f.lines > 200)
      .map((f) => `${f.path} (${f.lines})`),
    coreExports: exported.length,
    coreExportsNothingImports: unused.length,
    unused: unused.map((u) => `${u.file}: ${u.name}`),
    coreFolderCycles: cycles.map((c) => c.join(' <-> ')),
  };
}

const result = figures();
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  const w = (line: string) => process.stdout.write(`${line}\n`);
  w(`product lines (core, agent, lib, lambda): ${result.productLines}`);
  for (const [folder, lines] of Object.entries(result.linesPerFolder).sort((a, b) => b[1] - a[1]))
    w(`  ${folder.padEnd(24)} ${lines}`);
  w(`functions over 80 lines (constructors aside): ${result.functionsOver80}`);
  for (const f of result.longestFunctions) w(`  ${String(f.lines).padStart(4)}  ${f.file} ${f.name}`);
  w(`agent/commands files over 200 lines: ${result.commandFilesOver200.join(', ') || 'none'}`);
  w(
    `names exported from core/: ${result.coreExports}; imported by no other file: ${result.coreExportsNothingImports}`,
  );
  w(`cycles between core/ folders: ${result.coreFolderCycles.join(', ') || 'none'}`);
  if (process.argv.includes('--unused')) for (const u of result.unused) w(`  unused: ${u}`);
}
