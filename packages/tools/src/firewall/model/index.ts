// The classifier's parts, for the trainer and bench (bench/firewall/classifier): features, lexicon,
// pieces and the model format. The firewall itself uses classifier.ts.

export { BARE_MAX, isBare } from '../bare.ts';
// The rules and the invisible-text check, which the firewall combines with the classifier.
export { findInjection } from '../detect.ts';
export { cleanInvisible } from '../invisible.ts';
export {
  type Classifier,
  classifierOf,
  conceptsSha256,
  FORMAT,
  type HiddenMeta,
  hiddenRow,
  hiddenRows,
  loadClassifier,
  MODEL_DIR,
  type ModelMeta,
  shippedClassifier,
} from './classifier.ts';
export {
  BITS,
  DEFAULT_FEATURES,
  DIM,
  type FeatureOptions,
  featurise,
  normalise,
  type Sparse,
} from './features.ts';
export { CONCEPT_COUNT, CONCEPT_NAMES, CONCEPTS, conceptCounts } from './lexicon.ts';
export {
  conceptSparse,
  DEFAULT_MODEL,
  features,
  type ModelOptions,
  maxOverPieces,
  NCONCEPT,
  NPAIR,
  pieces,
  TOTAL_DIM,
  WINDOW,
  windows,
} from './pieces.ts';
