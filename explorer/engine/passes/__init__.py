"""The passes every engine that runs a model here makes: a prompt scored (`scoring`), a KV-cached decode loop
(`generation`, yielding `events`), scoring with word ends in the same pass (`word_ends`), and the bound they ask
between blocks and steps (`bounds`: limits, a deadline and a stop; the one way work stops)."""
