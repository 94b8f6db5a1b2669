-- The same text gives the same fingerprint in a UTF8, LATIN1 and EUC_CN database.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SELECT current_database() AS regress_db \gset
CREATE DATABASE simhash_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
CREATE DATABASE simhash_euc_cn ENCODING 'EUC_CN' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
SELECT simhash('Ünïcödé façade, naïve café'::text) AS latin_text,
       simhash_ngram('Ünïcödé façade, naïve café'::text) AS latin_ngram,
       simhash(ARRAY['façade']) AS latin_feature,
       simhash('中文新闻去重是一个老问题，ＰｏｓｔｇｒｅＳＱＬ'::text) AS chinese_text,
       simhash(ARRAY['新闻']) AS chinese_feature \gset
\c simhash_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT simhash('Ünïcödé façade, naïve café'::text) = :'latin_text' AS same_text,
       simhash_ngram('Ünïcödé façade, naïve café'::text) = :'latin_ngram' AS same_ngram,
       simhash(ARRAY['façade']) = :'latin_feature' AS same_feature,
       simhash('façade'::tsvector) = :'latin_feature' AS same_lexeme;
\c simhash_euc_cn
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT simhash('中文新闻去重是一个老问题，ＰｏｓｔｇｒｅＳＱＬ'::text) = :'chinese_text' AS same_text,
       simhash(ARRAY['新闻']) = :'chinese_feature' AS same_feature;
\c :regress_db
DROP DATABASE simhash_latin1;
DROP DATABASE simhash_euc_cn;
