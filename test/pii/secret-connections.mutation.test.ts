/**
 * Passwords in connection strings and URLs (with and without a user, with
 * '%', '$', '!' and other characters), DSNs and JDBC strings, and password statements in other
 * languages than English.
 */
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/pii/index.js';

const secrets = (text: string): string[] =>
  redact(text)
    .findings.filter((f) => f.type === 'SECRET')
    .map((f) => text.slice(f.start, f.end));

describe('SECRET: URL userinfo', () => {
  it.each([
    ['redis://:hunter2pass@cache:6379', 'hunter2pass'],
    ['rediss://:Xy9%24k!2q@host:6380/0', 'Xy9%24k!2q'],
    ['postgres://admin:s3cr%21t@db.example.com:5432/app', 's3cr%21t'],
    ['mysql://root:pa$$w0rd!@localhost/db', 'pa$$w0rd!'],
    ['mongodb+srv://app:p%40ss%21w0rd@cluster0.mongodb.net/db', 'p%40ss%21w0rd'],
    ['amqp://user:Tr0ub4dor&3@mq:5672', 'Tr0ub4dor&3'],
  ])('%s', (text, value) => {
    expect(secrets(text)).toEqual([value]);
  });

  it.each([
    ['a port and no userinfo', 'see http://:8080/x and http://example.com:8080/@foo'],
    ['a user without a password', 'ssh://git@github.com/org/repo'],
    ['an empty password', 'redis://:@cache:6379'],
    ['a double quote closing the URL', '"https://url:8000";@something else'],
    ['a single quote closing the URL', "'https://url:8000';@something else"],
    ['a backtick closing the URL', 'x `https://u:8000`@y'],
    ['an angle bracket closing the URL', '<https://url:8000>@x'],
    ['a lone opening angle bracket', 'https://url:8000<@x'],
  ])('not %s', (_name, text) => {
    expect(secrets(text)).toEqual([]);
  });
});

describe('SECRET: DSNs and JDBC strings', () => {
  it.each([
    ['jdbc:mysql://db:3306/app?user=root&password=Secr3t!x', 'Secr3t!x'],
    ['Server=db;Database=x;User Id=sa;Password=P@ssw0rd!;', 'P@ssw0rd!'],
    ['Data Source=db;Initial Catalog=x;User ID=sa;Password=My$ecr3t!;', 'My$ecr3t!'],
  ])('%s', (text, value) => {
    expect(secrets(text)).toEqual([value]);
  });
});

describe('SECRET: password statements in other languages', () => {
  it.each([
    ['senha: Segredo#2024', 'Segredo#2024'],
    ['Hasło: Tajne123!', 'Tajne123!'],
    ['haslo = Tajne123!', 'Tajne123!'],
    ['wachtwoord: Geheim2024!', 'Geheim2024!'],
    ['lösenord: Hemligt99', 'Hemligt99'],
    ['losenord: Hemligt99', 'Hemligt99'],
    ['adgangskode: Hemmelig42', 'Hemmelig42'],
    ['passord: Hemmelig42', 'Hemmelig42'],
    ['salasana: Salainen7', 'Salainen7'],
    ['Heslo: Tajne123', 'Tajne123'],
    ['jelszó: Titkos123', 'Titkos123'],
    ['jelszo: Titkos123', 'Titkos123'],
    ['пароль: Секрет2024', 'Секрет2024'],
    ['密码：mima12345', 'mima12345'],
    ['密碼: mima12345', 'mima12345'],
    ['비밀번호: secret1234!', 'secret1234!'],
  ])('%s', (text, value) => {
    expect(secrets(text)).toEqual([value]);
  });

  it.each([
    ['a word inside another', 'the cheslo field'],
    ['a plain word after it', 'wachtwoord vergeten, stuur een mail'],
  ])('not %s', (_name, text) => {
    expect(secrets(text)).toEqual([]);
  });
});
