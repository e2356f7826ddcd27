/* fuzz_bert_config.c - fuzz target of the trainer's config reader
 * (train/bert.h bert_config_load).
 *
 * The input is a bert_config.json, written to a scratch file and read with
 * bert_config_load. A config it accepts that also passes bert_config_check
 * is written back as Hugging Face's config.json (bert_config_json), which
 * bert_config_parse must read back to the same sizes.
 */
#include <stdint.h>
#include <string.h>

#include "train/bert.h"
#include "common/buf.h"
#include "tests/fuzz/fuzz.h"

/* One input: data as a bert_config.json file. Returns 0; a broken promise
 * aborts (fuzz_fail). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static FuzzTmp tmp;
    static int init;
    if (!init) fuzz_quiet("fuzz_bert_config"), init = 1;
    fuzz_tmp_write(&tmp, ".json", data, size);
    BertConfig c, back;
    Err err;
    if (bert_config_load(&c, tmp.path, &err)) {
        (void)strlen(err.msg);
        return 0;
    }
    if (bert_config_check(&c, &err)) return 0;
    Buf js = {0};
    bert_config_json(&c, &js);
    if (bert_config_parse(&back, js.data, js.len, "config.json", &err))
        fuzz_fail("bert_config_json's output is refused (%s):\n%s", err.msg, js.data);
    if (back.vocab_size != c.vocab_size || back.hidden_size != c.hidden_size ||
        back.num_hidden_layers != c.num_hidden_layers ||
        back.num_attention_heads != c.num_attention_heads ||
        back.intermediate_size != c.intermediate_size ||
        back.max_position_embeddings != c.max_position_embeddings ||
        back.type_vocab_size != c.type_vocab_size)
        fuzz_fail("sizes change through bert_config_json:\n%s", js.data);
    buf_free(&js);
    return 0;
}
