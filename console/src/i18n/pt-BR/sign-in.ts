import type { WordsOf } from '../../ui/i18n.js'
import type { signIn as en } from '../en/sign-in.js'

export const signIn: WordsOf<typeof en> = {
  'signIn.title': 'Entrar',
  'signIn.recovery': 'Códigos de recuperação',
  'signIn.keepCodes':
    'Guarde estes códigos em um lugar seguro: cada um permite entrar uma vez sem o autenticador. Eles só são mostrados agora.',
  'signIn.continue': 'Continuar',
  'signIn.tenant': 'Tenant',
  'signIn.identifier': 'E-mail, nome de usuário ou CPF/CNPJ',
  'signIn.password': 'Senha',
  'signIn.enterCode': 'Digite o código do seu app autenticador ou um código de recuperação.',
  'forgot.sent':
    'Se houver uma conta com endereço de e-mail correspondente, um e-mail com um link para escolher uma nova senha está a caminho. O link pode ser usado uma vez.',
  'forgot.send': 'Enviar o link',
  'forgot.back': 'Voltar para o login',
  'links.incomplete': 'Este link está incompleto: abra de novo o que está no seu e-mail.',
  'links.spent': 'Este link não vale mais: peça um novo.',
  'links.resetTitle': 'Escolha uma nova senha',
  'links.resetButton': 'Definir a senha',
  'links.resetDone': 'Sua senha foi alterada. Você já pode entrar com ela.',
  'links.verifyTitle': 'Confirme seu endereço de e-mail',
  'links.verifyButton': 'Confirmar meu endereço',
  'links.verifyDone': 'Seu endereço está confirmado. Você pode fechar esta página.',
  'links.press': 'Aperte o botão para confirmar que este endereço é seu.',
}
