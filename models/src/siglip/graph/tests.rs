//! Tests of `graph`.

use super::*;
use expect_test::expect;
use tessera_codegen::graph::dump;

#[test]
fn mlp_block_dump_tiny() {
    let g = mlp_block(&SiglipVisionConfig::tiny(), 16, 1).unwrap();
    expect![[r#"
        %0: f16[16, 64] = input "x"
        %1: f16[64] = weight "vision_model.encoder.layers.0.layer_norm2.weight"
        %2: f16[64] = weight "vision_model.encoder.layers.0.layer_norm2.bias"
        %3: f16[16, 64] = layernorm %0, %1, %2, eps=1e-6  // ln2
        %4: f143<-4>[16, 64] = cast %3  // fc1.in
        %5: f143<-10>[64, 128] = weight "vision_model.encoder.layers.0.mlp.fc1.weight"
        %6: f16[16, 128] = matmul %4, %5  // fc1
        %7: f32[128] = weight "vision_model.encoder.layers.0.mlp.fc1.bias"
        %8: f16[16, 128] = bias_add %6, %7  // fc1.bias
        %9: f16[16, 128] = gelu %8  // gelu
        %10: f143<-4>[16, 128] = cast %9  // fc2.in
        %11: f143<-10>[128, 64] = weight "vision_model.encoder.layers.0.mlp.fc2.weight"
        %12: f16[16, 64] = matmul %10, %11  // fc2
        %13: f32[64] = weight "vision_model.encoder.layers.0.mlp.fc2.bias"
        %14: f16[16, 64] = bias_add %12, %13  // fc2.bias
        %15: f16[16, 64] = add %0, %14  // residual2
        %16: f16[16, 64] = output "y", %15
    "#]]
    .assert_eq(&dump(&g));
}

#[test]
fn encoder_layer_dump_tiny() {
    let g = encoder_layer(&SiglipVisionConfig::tiny(), 16, 1).unwrap();
    expect![[r#"
        %0: f16[16, 64] = input "x"
        %1: f16[64] = weight "vision_model.encoder.layers.0.layer_norm1.weight"
        %2: f16[64] = weight "vision_model.encoder.layers.0.layer_norm1.bias"
        %3: f16[16, 64] = layernorm %0, %1, %2, eps=1e-6  // ln1
        %4: f143<-4>[16, 64] = cast %3  // qkv.in
        %5: f143<-10>[64, 192] = weight "vision_model.encoder.layers.0.self_attn.qkv_proj.weight_heads"
        %6: f16[16, 192] = matmul %4, %5  // qkv
        %7: f32[192] = weight "vision_model.encoder.layers.0.self_attn.qkv_proj.bias_heads"
        %8: f16[16, 192] = bias_add %6, %7  // qkv.bias
        %9: f16[16, 64] = slice %8, axis=1, range=0..64  // q
        %10: f16[16, 64] = slice %8, axis=1, range=64..128  // k
        %11: f16[16, 64] = slice %8, axis=1, range=128..192  // v
        %12: f16[4, 16, 16] = split_heads %9, heads=4, batch=1  // q.heads
        %13: f16[4, 16, 16] = split_heads %10, heads=4, batch=1  // k.heads
        %14: f16[4, 16, 16] = split_heads %11, heads=4, batch=1  // v.heads
        %15: f16[4, 16, 16] = transpose %13, perm=[0, 2, 1]  // k.t
        %16: f16[4, 16, 16] = batched_matmul %12, %15  // scores
        %17: f16[4, 16, 16] = softmax %16, scale=1.0  // probs
        %18: f16[4, 16, 16] = transpose %14, perm=[0, 2, 1]  // v.t
        %19: f16[4, 16, 16] = transpose %17, perm=[0, 2, 1]  // probs.t
        %20: f16[4, 16, 16] = batched_matmul %18, %19  // context
        %21: f16[4, 16, 16] = transpose %20, perm=[0, 2, 1]  // context.t
        %22: f16[16, 64] = merge_heads %21, heads=4  // context.merge
        %23: f143<-4>[16, 64] = cast %22  // out_proj.in
        %24: f143<-10>[64, 64] = weight "vision_model.encoder.layers.0.self_attn.out_proj.weight_heads"
        %25: f16[16, 64] = matmul %23, %24  // out_proj
        %26: f32[64] = weight "vision_model.encoder.layers.0.self_attn.out_proj.bias"
        %27: f16[16, 64] = bias_add %25, %26  // out_proj.bias
        %28: f16[16, 64] = add %0, %27  // residual1
        %29: f16[64] = weight "vision_model.encoder.layers.0.layer_norm2.weight"
        %30: f16[64] = weight "vision_model.encoder.layers.0.layer_norm2.bias"
        %31: f16[16, 64] = layernorm %28, %29, %30, eps=1e-6  // ln2
        %32: f143<-4>[16, 64] = cast %31  // fc1.in
        %33: f143<-10>[64, 128] = weight "vision_model.encoder.layers.0.mlp.fc1.weight"
        %34: f16[16, 128] = matmul %32, %33  // fc1
        %35: f32[128] = weight "vision_model.encoder.layers.0.mlp.fc1.bias"
        %36: f16[16, 128] = bias_add %34, %35  // fc1.bias
        %37: f16[16, 128] = gelu %36  // gelu
        %38: f143<-4>[16, 128] = cast %37  // fc2.in
        %39: f143<-10>[128, 64] = weight "vision_model.encoder.layers.0.mlp.fc2.weight"
        %40: f16[16, 64] = matmul %38, %39  // fc2
        %41: f32[64] = weight "vision_model.encoder.layers.0.mlp.fc2.bias"
        %42: f16[16, 64] = bias_add %40, %41  // fc2.bias
        %43: f16[16, 64] = add %28, %42  // residual2
        %44: f16[16, 64] = output "y", %43
    "#]].assert_eq(&dump(&g));
}

#[test]
fn encoder_dump_tiny_batch_2() {
    let g = encoder(&SiglipVisionConfig::tiny(), 16, 2, 2).unwrap();
    expect![[r#"
        region #0 `encoder_layer` (%0: f16[32, 64]) {
          %0: f16[32, 64] = input "x"
          %1: f16[64] = weight "layer_norm1.weight"
          %2: f16[64] = weight "layer_norm1.bias"
          %3: f16[32, 64] = layernorm %0, %1, %2, eps=1e-6  // ln1
          %4: f143<-4>[32, 64] = cast %3  // qkv.in
          %5: f143<-10>[64, 192] = weight "self_attn.qkv_proj.weight_heads"
          %6: f16[32, 192] = matmul %4, %5  // qkv
          %7: f32[192] = weight "self_attn.qkv_proj.bias_heads"
          %8: f16[32, 192] = bias_add %6, %7  // qkv.bias
          %9: f16[32, 64] = slice %8, axis=1, range=0..64  // q
          %10: f16[32, 64] = slice %8, axis=1, range=64..128  // k
          %11: f16[32, 64] = slice %8, axis=1, range=128..192  // v
          %12: f16[8, 16, 16] = split_heads %9, heads=4, batch=2  // q.heads
          %13: f16[8, 16, 16] = split_heads %10, heads=4, batch=2  // k.heads
          %14: f16[8, 16, 16] = split_heads %11, heads=4, batch=2  // v.heads
          %15: f16[8, 16, 16] = transpose %13, perm=[0, 2, 1]  // k.t
          %16: f16[8, 16, 16] = batched_matmul %12, %15  // scores
          %17: f16[8, 16, 16] = softmax %16, scale=1.0  // probs
          %18: f16[8, 16, 16] = transpose %14, perm=[0, 2, 1]  // v.t
          %19: f16[8, 16, 16] = transpose %17, perm=[0, 2, 1]  // probs.t
          %20: f16[8, 16, 16] = batched_matmul %18, %19  // context
          %21: f16[8, 16, 16] = transpose %20, perm=[0, 2, 1]  // context.t
          %22: f16[32, 64] = merge_heads %21, heads=4  // context.merge
          %23: f143<-4>[32, 64] = cast %22  // out_proj.in
          %24: f143<-10>[64, 64] = weight "self_attn.out_proj.weight_heads"
          %25: f16[32, 64] = matmul %23, %24  // out_proj
          %26: f32[64] = weight "self_attn.out_proj.bias"
          %27: f16[32, 64] = bias_add %25, %26  // out_proj.bias
          %28: f16[32, 64] = add %0, %27  // residual1
          %29: f16[64] = weight "layer_norm2.weight"
          %30: f16[64] = weight "layer_norm2.bias"
          %31: f16[32, 64] = layernorm %28, %29, %30, eps=1e-6  // ln2
          %32: f143<-4>[32, 64] = cast %31  // fc1.in
          %33: f143<-10>[64, 128] = weight "mlp.fc1.weight"
          %34: f16[32, 128] = matmul %32, %33  // fc1
          %35: f32[128] = weight "mlp.fc1.bias"
          %36: f16[32, 128] = bias_add %34, %35  // fc1.bias
          %37: f16[32, 128] = gelu %36  // gelu
          %38: f143<-4>[32, 128] = cast %37  // fc2.in
          %39: f143<-10>[128, 64] = weight "mlp.fc2.weight"
          %40: f16[32, 64] = matmul %38, %39  // fc2
          %41: f32[64] = weight "mlp.fc2.bias"
          %42: f16[32, 64] = bias_add %40, %41  // fc2.bias
          %43: f16[32, 64] = add %28, %42  // residual2
          %44: f16[32, 64] = output "y", %43
        }
        %0: f16[32, 64] = input "x"
        %1: f16[32, 64] = repeat #0 x2 (%0), weights="vision_model.encoder.layers.{i}."  // encoder
        %2: f16[32, 64] = output "y", %1
    "#]]
    .assert_eq(&dump(&g));
}

/// The key-chunked context (values projected transposed, their bias folded into the output
/// projection's, chunks summed by adds) computes the layer the plain form does.
#[test]
fn key_chunked_context_computes_the_same_layer() {
    use std::collections::BTreeMap;
    use tessera_codegen::graph::{evaluate, HostTensor};
    let config = SiglipVisionConfig::tiny();
    let (tokens, batch) = (2 * MIN_K_CHUNK, 2);
    assert_eq!(key_chunks(&chunked(), tokens), Some(2));
    let selection = super::super::weights::WeightSelection::encoder(1);
    let mut store = super::super::weights::synthetic_weights(&config, &selection, 3);
    // Values' biases large enough that leaving them out shows.
    let qkv_bias = format!("{}{}", layer_prefix(0), names::QKV_BIAS);
    let mut bias = store.get(&qkv_bias).unwrap().clone();
    bias.data.iter_mut().for_each(|b| *b = *b * 20.0 + 0.5);
    store.insert(qkv_bias, bias);
    super::super::derived::add_derived_weights(&config, &mut store).unwrap();
    let mut rng = tessera_isa::rng::Rng::new(9);
    let n = batch * tokens * config.hidden_size;
    let x: Vec<f32> = (0..n).map(|_| rng.normal(0.0, 1.0) as f32).collect();
    let x = HostTensor::new([batch * tokens, config.hidden_size], x).unwrap();
    let inputs = BTreeMap::from([("x".to_string(), x)]);
    let run = |precision: &Precision| {
        let g = encoder_layer_with(&config, tokens, batch, precision).unwrap();
        evaluate(&g, &inputs, &store).unwrap()["y"].data.clone()
    };
    let plain = run(&Precision::f16());
    let split = run(&chunked());
    let rms = |v: &[f32]| (v.iter().map(|x| x * x).sum::<f32>() / v.len() as f32).sqrt();
    let diff: Vec<f32> = plain.iter().zip(&split).map(|(a, b)| a - b).collect();
    assert!(
        rms(&diff) < 2e-3 * rms(&plain),
        "{} vs {}",
        rms(&diff),
        rms(&plain)
    );
    // The values' bias matters: without folding it the chunked form would be off.
    let mut unfolded = store.clone();
    let name = format!(
        "{}{}",
        layer_prefix(0),
        super::super::derived::OUT_BIAS_FOLDED
    );
    let plain_bias = unfolded
        .get(&format!("{}{}", layer_prefix(0), names::OUT_BIAS))
        .unwrap()
        .clone();
    unfolded.insert(name, plain_bias);
    let g = encoder_layer_with(&config, tokens, batch, &chunked()).unwrap();
    let off = evaluate(&g, &inputs, &unfolded).unwrap()["y"].data.clone();
    let diff: Vec<f32> = plain.iter().zip(&off).map(|(a, b)| a - b).collect();
    assert!(rms(&diff) > 3e-2 * rms(&plain), "{}", rms(&diff));
}

fn chunked() -> Precision {
    Precision {
        key_chunked_context: true,
        ..Precision::f16()
    }
}

#[test]
fn f16_precision_has_no_casts() {
    let g = encoder_layer_with(&SiglipVisionConfig::tiny(), 16, 1, &Precision::f16()).unwrap();
    assert!(!dump(&g).contains("cast"));
    assert!(!dump(&g).contains("f143"));
}

#[test]
fn so400m_shapes() {
    let c = SiglipVisionConfig::so400m_patch14_378();
    let g = encoder_layer(&c, c.num_patches(), 8).unwrap();
    let text = dump(&g);
    assert!(text.contains("f16[5832, 1152] = input \"x\""), "{text}");
    // Heads padded 72 → 80 (whole AMP channel blocks), the scale folded into the queries.
    assert!(text.contains("f143<-10>[1152, 3840] = weight \"vision_model.encoder.layers.0.self_attn.qkv_proj.weight_heads\""), "{text}");
    // The blocks combined over each head's own 72 columns, so the output projection reads
    // the checkpoint's weight.
    assert!(text.contains("f143<-10>[1152, 1152] = weight \"vision_model.encoder.layers.0.self_attn.out_proj.weight\""), "{text}");
    assert!(text.contains("f16[128, 9, 729, 72] = slice"), "{text}");
    // Batch 8: attention in 9 key blocks of 81 (key_blocks) for 8 × 16 heads.
    assert!(
        text.contains("f16[1152, 729, 81] = batched_matmul"),
        "{text}"
    );
    // Each block's exponentials padded to whole K-blocks (96), then (m, l, 0, 0); its
    // values padded with zero rows as far.
    assert!(
        text.contains("f16[1152, 729, 100] = softmax_part"),
        "{text}"
    );
    assert!(text.contains("f16[1152, 96, 80] = pad"), "{text}");
    // Batch 8: above MAX_SPLIT_BATCH, so fc1 is one product (EncoderKParts::for_config),
    // its width padded 4304 → 4352 with zero units (whole FP8 K-blocks for fc2).
    assert!(text.contains("f16[5832, 4352] = matmul"), "{text}");
    assert!(text.contains("f143<-10>[4352, 1152] = weight \"vision_model.encoder.layers.0.mlp.fc2.weight_padded\""), "{text}");
    let g = encoder(&c, c.num_patches(), 1, 27).unwrap();
    assert_eq!(g.expanded_weights().len(), 27 * 12);
}

#[test]
fn key_blocks_are_whole_k_blocks_or_64_keys_or_more() {
    assert_eq!(key_blocks(729), 9, "So400m/14: 9 blocks of 81");
    assert_eq!(
        key_blocks(64),
        4,
        "the built-in model: 4 K-blocks of 16 keys"
    );
    assert_eq!(key_blocks(16), 1, "one K-block of keys stays whole");
    assert_eq!(key_blocks(1024), 16, "at most 16 blocks");
    assert_eq!(key_blocks(197), 1, "a prime count stays whole");
    for tokens in 1..2000 {
        let c = key_blocks(tokens);
        let aligned = (tokens / c).is_multiple_of(16);
        assert!(tokens.is_multiple_of(c) && c <= MAX_AUTO_KEY_BLOCKS);
        assert!(c == 1 || aligned || tokens / c >= MIN_KEY_BLOCK);
    }
    let forced = Precision {
        key_blocks: Some(3),
        ..Precision::default()
    };
    assert_eq!(forced.key_blocks_for(729), 3);
    assert_eq!(forced.key_blocks_for(64), 1, "3 does not divide 64");
}

/// K-chunks divide K, hold at least MIN_K_CHUNK, number at most MAX_K_PARTS, and are the
/// most such: checked against every divisor for every K up to 5000.
#[test]
fn k_parts_is_the_largest_fitting_divisor() {
    for k in 1..5000usize {
        let c = k_parts(k);
        assert_eq!(k % c, 0, "k {k}");
        let fits = |c: usize| k % c == 0 && c <= MAX_K_PARTS && k / c >= MIN_K_CHUNK;
        let best = (1..=k).filter(|&c| fits(c)).max().unwrap_or(1);
        assert_eq!(c, best, "k {k}");
    }
    assert_eq!((k_parts(729), k_parts(1152), k_parts(4304)), (9, 18, 16));
}

#[test]
fn bad_sizes_are_errors() {
    let c = SiglipVisionConfig::tiny();
    assert_eq!(
        mlp_block(&c, 0, 1).unwrap_err().to_string(),
        "E-GRAPH-009: input `x`: shape [0, 64] is invalid: a dimension is 0 (the graph has no empty tensors)"
    );
    assert_eq!(
        encoder(&c, 16, 1, 0).unwrap_err().to_string(),
        "E-GRAPH-008: repeat `encoder`: count = 0 is invalid: must be ≥ 1"
    );
    let bad = Precision {
        nominal_weight_scale: 40,
        ..Precision::default()
    };
    assert!(mlp_block_with(&c, 16, 1, &bad)
        .unwrap_err()
        .to_string()
        .starts_with("E-GRAPH-008: weight"));
}
