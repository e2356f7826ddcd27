"""tests/cli/hf_check.py - read train_bert_cpu's Hugging Face export with
transformers' BertForPreTraining and print its losses (NVIDIA's criterion)
on the first N rows of an HDF5 file, as train_bert_cpu --eval_file does.

    python3 hf_check.py HF_DIR FILE.hdf5 N
"""
import sys, torch, h5py, numpy as np
from transformers import BertForPreTraining
d, h5, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m, info = BertForPreTraining.from_pretrained(d, output_loading_info=True)
# lists in transformers 4, sets in 5: printed by value, sorted
print("missing", sorted(info["missing_keys"]), "unexpected", sorted(info["unexpected_keys"]))
m.eval()
f = h5py.File(h5, "r")
ids = torch.tensor(f["input_ids"][:n], dtype=torch.long); seg = torch.tensor(f["segment_ids"][:n], dtype=torch.long)
msk = torch.tensor(f["input_mask"][:n], dtype=torch.long); pos = f["masked_lm_positions"][:n]; lab = f["masked_lm_ids"][:n]
labels = torch.full(ids.shape, -1)
for i in range(n):
    k = list(pos[i]).index(0) if 0 in list(pos[i]) else len(pos[i])
    labels[i, pos[i][:k]] = torch.tensor(lab[i][:k], dtype=torch.long)
with torch.no_grad():
    o = m(input_ids=ids, token_type_ids=seg, attention_mask=msk)
mlm = torch.nn.functional.cross_entropy(o.prediction_logits.view(-1, o.prediction_logits.shape[-1]), labels.view(-1), ignore_index=-1)
nsp = torch.nn.functional.cross_entropy(o.seq_relationship_logits, torch.tensor(f["next_sentence_labels"][:n], dtype=torch.long))
print("loss %.6f mlm %.6f nsp %.6f" % (float(mlm + nsp), float(mlm), float(nsp)))
