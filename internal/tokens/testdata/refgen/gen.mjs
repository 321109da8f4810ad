// gen.mjs writes ../reference_counts.json: the token count of every case of
// ../reference_corpus.json under cl100k_base, o200k_base and p50k_base, as
// computed by the npm package gpt-tokenizer — an implementation independent of
// the Go code under test. Run once after changing the corpus:
//
//	cd tokens/testdata/refgen && npm ci && node gen.mjs
//
// gpt-tokenizer's BPE merge is quadratic in the piece length: the 256 KiB runs
// take about 30-50 s each, so the whole run takes a few minutes. 1 MiB runs
// (about 16x longer each) are left out for that reason.
import { readFileSync, writeFileSync } from 'node:fs'
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base'
import * as o200k from 'gpt-tokenizer/encoding/o200k_base'
import * as p50k from 'gpt-tokenizer/encoding/p50k_base'

const encodings = { cl100k_base: cl100k, o200k_base: o200k, p50k_base: p50k }
// Special-token text is counted as ordinary text, as ctxc does.
const ordinary = { allowedSpecial: new Set(), disallowedSpecial: new Set() }

function expand(c) {
  return c.text.repeat(c.repeat ?? 1) + (c.suffix ?? '')
}

function generate(corpusFile, outFile) {
  const corpus = JSON.parse(readFileSync(new URL(corpusFile, import.meta.url), 'utf8'))
  const out = { generator: 'gpt-tokenizer@' + JSON.parse(readFileSync(new URL('./node_modules/gpt-tokenizer/package.json', import.meta.url), 'utf8')).version, counts: {} }
  for (const [name, enc] of Object.entries(encodings)) {
    out.counts[name] = {}
    for (const c of corpus) {
      const started = Date.now()
      out.counts[name][c.name] = enc.encode(expand(c), ordinary).length
      process.stderr.write(`${name} ${c.name}: ${out.counts[name][c.name]} (${Date.now() - started} ms)\n`)
    }
  }
  writeFileSync(new URL(outFile, import.meta.url), JSON.stringify(out, null, 2) + '\n')
}

generate('../reference_corpus.json', '../reference_counts.json')