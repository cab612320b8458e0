import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../core/errors.ts';
import {
  describeCall,
  formatRule,
  parseRule,
  type PermissionRule,
  type RuleCall,
  ruleMatches,
  sessionRuleFor,
} from './rule-syntax.ts';

const CWD = '/work/repo';
const HOME = '/home/ann';

function matches(rule: string, tool: string, input: unknown, purpose: 'allow' | 'deny' = 'allow'): boolean {
  const call: RuleCall = { tool, input, cwd: CWD, home: HOME };
  return ruleMatches(parseRule(rule), call, purpose);
}

test('parseRule: bare names, specifiers, escapes', () => {
  const cases: [string, PermissionRule][] = [
    ['Read', { tool: 'Read', specifier: null }],
    ['  Bash  ', { tool: 'Bash', specifier: null }],
    ['Bash(git status:*)', { tool: 'Bash', specifier: 'git status:*' }],
    ['Bash(npm test)', { tool: 'Bash', specifier: 'npm test' }],
    ['Edit(src/**)', { tool: 'Edit', specifier: 'src/**' }],
    ['Read(//abs/path/**)', { tool: 'Read', specifier: '//abs/path/**' }],
    ['Read(~/x)', { tool: 'Read', specifier: '~/x' }],
    ['WebFetch(domain:example.com)', { tool: 'WebFetch', specifier: 'domain:example.com' }],
    ['mcp__server', { tool: 'mcp__server', specifier: null }],
    ['mcp__server__tool', { tool: 'mcp__server__tool', specifier: null }],
    ['mcp__my-server__*', { tool: 'mcp__my-server__*', specifier: null }],
    ['Bash(python -c "print(1)")', { tool: 'Bash', specifier: 'python -c "print(1)"' }],
    ['Bash(echo \\))', { tool: 'Bash', specifier: 'echo )' }],
    ['Bash(echo \\\\)', { tool: 'Bash', specifier: 'echo \\' }],
    ['Bash(grep a\\|b)', { tool: 'Bash', specifier: 'grep a\\|b' }],
  ];
  for (const [text, rule] of cases) assert.deepEqual(parseRule(text), rule, text);
});

test('parseRule: malformed text is an invalid_input error for field rule that says what is wrong', () => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['   ', /empty/],
    ['Bash(', /unbalanced/],
    ['Bash(npm test', /unbalanced/],
    ['Bash)', /unbalanced/],
    ['Bash(a))', /unbalanced/],
    ['Bash((a)', /unbalanced/],
    ['Bash(a\\)', /unbalanced/],
    ['Bash(x) y', /unbalanced/],
    ['Bash()', /empty specifier/],
    ['Bash(   )', /empty specifier/],
    ['(npm test)', /bad tool name/],
    ['Bash (npm test)', /bad tool name/],
    ['1Tool', /bad tool name/],
    ['Read Write', /bad tool name/],
    ['Bash*', /bad tool name/],
    ['Tool__*', /bad tool name/],
    ['mcp__*', /bad tool name/],
    ['mcp____*', /bad tool name/],
    ['x'.repeat(12_001), /longer than/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseRule(text),
      (error: unknown) =>
        error instanceof AppError &&
        error.kind === 'invalid_input' &&
        error.field === 'rule' &&
        message.test(error.message),
      text.slice(0, 40),
    );
  }
});

test('formatRule: the inverse of parseRule, escaping only when it must', () => {
  const texts = ['Read', 'Bash(git status:*)', 'Edit(src/**)', 'mcp__s__*', 'Bash(python -c "print(1)")'];
  for (const text of texts) assert.equal(formatRule(parseRule(text)), text);
  const rules: PermissionRule[] = [
    { tool: 'Bash', specifier: 'echo )' },
    { tool: 'Bash', specifier: 'echo (' },
    { tool: 'Bash', specifier: 'echo \\' },
    { tool: 'Bash', specifier: 'printf "a\\\\)b" && ls' },
    { tool: 'Bash', specifier: 'rm -rf build/\\* && make' },
    { tool: 'WebFetch', specifier: 'https://x.test/a_(b)' },
  ];
  for (const rule of rules) assert.deepEqual(parseRule(formatRule(rule)), rule, formatRule(rule));
  assert.equal(formatRule({ tool: 'Bash', specifier: 'echo )' }), 'Bash(echo \\))');
});

test('ruleMatches: bare names match every use of their tool; MCP rules name a server or one tool', () => {
  const cases: [string, string, boolean][] = [
    ['Bash', 'Bash', true],
    ['Bash', 'Read', false],
    ['Read', 'Read', true],
    ['Read', 'Grep', true],
    ['Read', 'Glob', true],
    ['Read', 'Edit', false],
    ['Edit', 'Write', true],
    ['Edit', 'MultiEdit', true],
    ['Edit', 'NotebookEdit', true],
    ['Write', 'Edit', false],
    ['mcp__github', 'mcp__github__create_issue', true],
    ['mcp__github', 'mcp__github', true],
    ['mcp__github', 'mcp__githubx__a', false],
    ['mcp__github', 'mcp__gitlab__a', false],
    ['mcp__github__*', 'mcp__github__list', true],
    ['mcp__github__*', 'mcp__gitlab__list', false],
    ['mcp__github__create_issue', 'mcp__github__create_issue', true],
    ['mcp__github__create_issue', 'mcp__github__delete_repo', false],
    ['WebFetch', 'WebFetch', true],
  ];
  for (const [rule, tool, expected] of cases) assert.equal(matches(rule, tool, {}), expected, `${rule} ~ ${tool}`);
});

test('ruleMatches: Bash rules read the own command string of the input only', () => {
  assert.equal(matches('Bash(npm test:*)', 'Bash', { command: 'npm test -- --watch' }), true);
  assert.equal(matches('Bash(npm test:*)', 'Bash', { command: 42 }), false);
  assert.equal(matches('Bash(npm test:*)', 'Bash', 'npm test'), false);
  assert.equal(matches('Bash(npm test:*)', 'Bash', null), false);
  assert.equal(matches('Bash(npm test:*)', 'Bash', ['npm test']), false);
  const inherited: unknown = Object.create({ command: 'npm test' });
  assert.equal(matches('Bash(npm test:*)', 'Bash', inherited), false);
  assert.equal(matches('Bash', 'Bash', inherited), true);
});

test('ruleMatches: path rules, rooted as Claude Code roots them', () => {
  const cases: [string, string, unknown, boolean][] = [
    ['Edit(src/**)', 'Edit', { file_path: '/work/repo/src/a.ts' }, true],
    ['Edit(src/**)', 'Edit', { file_path: 'src/deep/er/a.ts' }, true],
    ['Edit(src/**)', 'Edit', { file_path: '/work/repo/srcx/a.ts' }, false],
    ['Edit(src/**)', 'Edit', { file_path: '/work/repo/lib/src/a.ts' }, false],
    ['Edit(src/**)', 'Edit', { file_path: '/work/repo/src/../secrets/a.ts' }, false],
    ['Edit(src/**)', 'Edit', { file_path: '/elsewhere/src/a.ts' }, false],
    ['Edit(src/**)', 'Write', { file_path: '/work/repo/src/new.ts' }, true],
    ['Edit(src/**)', 'MultiEdit', { file_path: '/work/repo/src/a.ts' }, true],
    ['Edit(src/**)', 'NotebookEdit', { notebook_path: '/work/repo/src/n.ipynb' }, true],
    ['Edit(src/**)', 'Edit', {}, false],
    ['Edit(/src/*.ts)', 'Edit', { file_path: '/work/repo/src/a.ts' }, true],
    ['Edit(/src/*.ts)', 'Edit', { file_path: '/work/repo/src/sub/a.ts' }, false],
    ['Edit(./src/*.ts)', 'Edit', { file_path: '/work/repo/src/a.ts' }, true],
    ['Edit(src)', 'Edit', { file_path: '/work/repo/src/a.ts' }, true],
    ['Read(*.env)', 'Read', { file_path: '/work/repo/.env' }, true],
    ['Read(*.env)', 'Read', { file_path: '/work/repo/config/prod.env' }, true],
    ['Read(*.env)', 'Read', { file_path: '/work/repo/env.txt' }, false],
    ['Read(*.env)', 'Read', { file_path: '/other/.env' }, false],
    ['Read(node_modules/)', 'Read', { file_path: '/work/repo/a/node_modules/x/i.js' }, true],
    ['Read(node_modules/)', 'Read', { file_path: '/work/repo/node_modules' }, false],
    ['Read(//abs/path/**)', 'Read', { file_path: '/abs/path/x/y' }, true],
    ['Read(//abs/path/**)', 'Read', { file_path: '/abs/pathx/y' }, false],
    ['Read(/abs/path/**)', 'Read', { file_path: '/abs/path/x' }, false],
    ['Read(/abs/path/**)', 'Read', { file_path: '/work/repo/abs/path/x' }, true],
    ['Read(~/x)', 'Read', { file_path: '/home/ann/x' }, true],
    ['Read(~/x)', 'Read', { file_path: '~/x' }, true],
    ['Read(~/x)', 'Read', { file_path: '/work/repo/x' }, false],
    ['Read(~/.ssh/**)', 'Read', { file_path: '/home/ann/.ssh/id_ed25519' }, true],
    ['Read(~/docs/*.pdf)', 'Read', { file_path: '/home/ann/docs/a.pdf' }, true],
    ['Read(~/docs/*.pdf)', 'Read', { file_path: '/home/ann/docs/sub/a.pdf' }, false],
    ['Read(~/docs/**/*.pdf)', 'Read', { file_path: '/home/ann/docs/a.pdf' }, true],
    ['Read(~/docs/**/*.pdf)', 'Read', { file_path: '/home/ann/docs/s/t/a.pdf' }, true],
    ['Read(src/?.ts)', 'Read', { file_path: '/work/repo/src/a.ts' }, true],
    ['Read(src/?.ts)', 'Read', { file_path: '/work/repo/src/ab.ts' }, false],
    ['Read(src/[ab].ts)', 'Read', { file_path: '/work/repo/src/b.ts' }, true],
    ['Read(src/[!ab].ts)', 'Read', { file_path: '/work/repo/src/b.ts' }, false],
    ['Read(src/[a-c]*.ts)', 'Read', { file_path: '/work/repo/src/cat.ts' }, true],
    ['Read(src/\\*.ts)', 'Read', { file_path: '/work/repo/src/a.ts' }, false],
    ['Read(src/\\*.ts)', 'Read', { file_path: '/work/repo/src/*.ts' }, true],
    ['Read(src/**)', 'Grep', { pattern: 'x', path: '/work/repo/src/lib' }, true],
    ['Read(src/**)', 'Grep', { pattern: 'x' }, false],
    ['Read(**)', 'Grep', { pattern: 'x' }, true],
    ['Read(src/**)', 'Glob', { pattern: '**/*.ts', path: 'src' }, true],
    ['Read(src/**)', 'Read', { file_path: '/work/repo/src' }, false],
    ['Read(src/**)', 'LS', { path: '/work/repo' }, false],
    ['Read(src/**)', 'Glob', { pattern: '**/*.ts', path: 'src/a' }, true],
    ['Read(src/**)', 'Glob', { pattern: '../../etc/*', path: 'src/a' }, false],
    ['Read(src/**)', 'Glob', { pattern: '/etc/*', path: 'src/a' }, false],
    ['Read(src/**)', 'Glob', { pattern: '{..,x}/etc/*', path: 'src/a' }, false],
    ['Read(src/**)', 'Grep', { pattern: 'x', file_path: 'src/a', path: '/etc' }, false],
    ['Read(src/**)', 'Read', { file_path: 'src/a', path: '/etc' }, true],
    ['Read(src/**)', 'Read', { path: 'src/a' }, false],
    ['Edit(src/**)', 'NotebookEdit', { file_path: 'src/a', notebook_path: '/etc/n.ipynb' }, false],
    ['Read(src/**)', 'Read', { file_path: 42 }, false],
  ];
  for (const [rule, tool, input, expected] of cases) {
    assert.equal(matches(rule, tool, input), expected, `${rule} ~ ${tool} ${JSON.stringify(input)}`);
  }
  assert.equal(matches('Read(src/**)', 'Glob', { pattern: '/etc/*', path: 'src/a' }, 'deny'), true);
  const relativeCwd = { tool: 'Read', input: { file_path: 'a' }, cwd: 'repo', home: HOME };
  assert.equal(ruleMatches(parseRule('Read(**)'), relativeCwd), false);
  const hostile = `//${'**/a*'.repeat(300)}b`;
  assert.equal(matches(`Read(${hostile})`, 'Read', { file_path: `/${'a/'.repeat(1000)}a` }), false);
  assert.equal(matches(`Read(//${'*a'.repeat(500)}b)`, 'Read', { file_path: `/${'a'.repeat(3000)}` }), false);
  const deep = `${'/a'.repeat(2100)}`;
  assert.equal(matches('Read(//**)', 'Read', { file_path: deep }), false);
});

test('ruleMatches: WebFetch(domain:host) matches the host and its subdomains', () => {
  const cases: [string, string, boolean][] = [
    ['domain:example.com', 'https://example.com/a', true],
    ['domain:example.com', 'http://docs.example.com/a?b', true],
    ['domain:example.com', 'https://EXAMPLE.com./', true],
    ['domain:example.com', 'https://notexample.com/', false],
    ['domain:example.com', 'https://example.com.evil.test/', false],
    ['domain:example.com', 'https://evil.test/?u=https://example.com/', false],
    ['domain:example.com', 'https://example.com@evil.test/', false],
    ['domain:example.com', 'file:///example.com', false],
    ['domain:example.com', 'not a url', false],
    ['domain:*.example.com', 'https://a.example.com/', true],
    ['domain:*.example.com', 'https://example.com/', false],
  ];
  for (const [spec, url, expected] of cases) {
    assert.equal(matches(`WebFetch(${spec})`, 'WebFetch', { url, prompt: 'p' }), expected, `${spec} ~ ${url}`);
  }
  assert.equal(matches('WebFetch(domain:example.com)', 'WebFetch', { prompt: 'https://example.com' }), false);
});

test('ruleMatches: any other specifier must equal the primary field exactly', () => {
  assert.equal(matches('WebSearch(claude code)', 'WebSearch', { query: 'claude code' }), true);
  assert.equal(matches('WebSearch(claude code)', 'WebSearch', { query: 'claude code rules' }), false);
  assert.equal(matches('WebFetch(https://x.test/a)', 'WebFetch', { url: 'https://x.test/a' }), true);
  assert.equal(matches('mcp__s__t(abc)', 'mcp__s__t', { path: 'abc' }), true);
  assert.equal(matches('mcp__s__t(abc)', 'mcp__s__t', { other: 'abc' }), false);
  assert.equal(matches('Task(x)', 'Task', Object.create({ query: 'x' })), false);
});

test('sessionRuleFor: Bash up to its arguments, WebFetch by domain, else the bare tool', () => {
  const cases: [string, unknown, string][] = [
    ['Bash', { command: 'npm test --watch' }, 'Bash(npm test:*)'],
    ['Bash', { command: 'ls -la' }, 'Bash(ls:*)'],
    ['Bash', { command: 'git status' }, 'Bash(git status:*)'],
    ['Bash', { command: 'npm test && rm -rf /' }, 'Bash(npm test && rm -rf /)'],
    ['Bash', { command: 'echo $(id)' }, 'Bash(echo $(id))'],
    ['WebFetch', { url: 'https://Docs.Example.com/a', prompt: 'p' }, 'WebFetch(domain:docs.example.com)'],
    ['WebFetch', { url: 'ftp://x.test/a' }, 'WebFetch(ftp://x.test/a)'],
    ['Edit', { file_path: '/work/repo/a.ts' }, 'Edit'],
    ['Read', { file_path: '/etc/hosts' }, 'Read'],
    ['mcp__github__create_issue', { title: 't' }, 'mcp__github__create_issue'],
  ];
  for (const [tool, input, expected] of cases) {
    const rule = sessionRuleFor({ tool, input });
    assert.equal(formatRule(rule), expected);
    assert.deepEqual(parseRule(formatRule(rule)), rule);
    assert.equal(ruleMatches(rule, { tool, input, cwd: CWD, home: HOME }), true, `${expected} covers its own call`);
  }
  for (const input of [{}, { command: '  ' }, { command: 1 }, Object.create({ command: 'ls' })]) {
    assert.throws(
      () => sessionRuleFor({ tool: 'Bash', input }),
      (e: unknown) => e instanceof AppError,
    );
  }
  assert.throws(
    () => sessionRuleFor({ tool: 'WebFetch', input: {} }),
    (e: unknown) => e instanceof AppError,
  );
});

test('describeCall: the tool and its summary on one line', () => {
  assert.equal(describeCall({ tool: 'Bash', input: { command: 'npm test' } }), 'Bash: npm test');
  assert.equal(describeCall({ tool: 'Edit', input: { file_path: 'src/a.ts', old_string: 'x' } }), 'Edit: src/a.ts');
  assert.equal(describeCall({ tool: 'WebFetch', input: { url: 'https://x.test/' } }), 'WebFetch: https://x.test/');
  assert.equal(describeCall({ tool: 'TodoWrite', input: { todos: [] } }), 'TodoWrite');
  assert.equal(describeCall({ tool: 'Bash', input: { command: 'a\nb' } }), 'Bash: a b');
  assert.equal(describeCall({ tool: 'Task', input: null }), 'Task');
});
